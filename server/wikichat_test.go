package server

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/rerank"
)

func TestWikiChatValid(t *testing.T) {
	s, l := newTestServer(t, Options{})
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, body []byte, seen []rerank.Query)
	}{
		{"string query", `{"query":"` + newbornQuery + `","num_blocks":3}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				var out []WikiChatQueryResult
				mustJSON(t, b, &out)
				if len(out) != 1 || len(out[0].Results) != 3 {
					t.Fatalf("want 1 query result with 3 blocks: %s", b)
				}
				top := out[0].Results[0]
				if top.BlockMetadata["passage_id"] != newbornID || top.SimilarityScore != 6 ||
					!strings.HasPrefix(top.DocumentTitle, "Microstructural development") {
					t.Errorf("top block = %+v", top)
				}
				if strings.HasPrefix(top.Content, top.DocumentTitle) || !strings.HasPrefix(top.Content, "Alterations of the architecture") {
					t.Errorf("content keeps the title prefix: %.80q", top.Content)
				}
				if top.LastEditDate != nil {
					t.Errorf("SciFact has no dates, got %q", *top.LastEditDate)
				}
				// probability_score is the softmax of the query's scores (all integers here,
				// so rounding similarity_score loses nothing).
				var sum float64
				for _, blk := range out[0].Results {
					sum += math.Exp(blk.SimilarityScore)
				}
				for i, blk := range out[0].Results {
					if want := round3(math.Exp(blk.SimilarityScore) / sum); blk.ProbabilityScore != want {
						t.Errorf("block %d: probability %v, want %v", i, blk.ProbabilityScore, want)
					}
				}
				if seen[0].Rerank != nil || seen[0].K != 3 {
					t.Errorf("engine saw %+v", seen[0])
				}
			}},
		{"list query with rerank", `{"query":["` + newbornQuery + `","myelodysplasia"],"num_blocks":2,"rerank":true,"num_blocks_to_rerank":20}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				var out []WikiChatQueryResult
				mustJSON(t, b, &out)
				if len(out) != 2 || out[1].Results[0].BlockMetadata["passage_id"] != "5836#0" {
					t.Fatalf("results: %s", b)
				}
				for _, q := range seen {
					if len(q.Rerank) != 1 || q.Rerank[0] != rerank.StageCross || q.Candidates != 20 || q.K != 2 {
						t.Errorf("engine saw %+v", q)
					}
				}
			}},
		{"num_blocks_to_rerank raised to num_blocks", `{"query":"malaria","num_blocks":5,"rerank":true,"num_blocks_to_rerank":2}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				if seen[0].Candidates != 5 {
					t.Errorf("candidates %d, want 5", seen[0].Candidates)
				}
			}},
		{"filters", `{"query":"malaria","num_blocks":5,"search_filters":[
			{"field_name":"language","filter_type":"eq","field_value":"en"},
			{"field_name":"source","filter_type":"eq","field_value":"scifact"},
			{"field_name":"last_edit_date","filter_type":"gte","field_value":"2024-10-14T00:00:00"},
			{"field_name":"last_edit_date","filter_type":"lt","field_value":"2025-01-01"}]}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				f := seen[0].Filters
				if !f.DateFrom.Equal(time.Date(2024, 10, 14, 0, 0, 0, 0, time.UTC)) ||
					!f.DateTo.Equal(time.Date(2024, 12, 31, 23, 59, 59, 999999999, time.UTC)) ||
					len(f.Sources) != 1 || f.Sources[0] != "scifact" {
					t.Errorf("filters %+v", f)
				}
			}},
		{"block type filters AND", `{"query":"malaria","num_blocks":5,"search_filters":[
			{"field_name":"block_type","filter_type":"ne","field_value":"text"},
			{"field_name":"block_type","filter_type":"ne","field_value":"infobox"}]}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				if f := seen[0].Filters; f.None || !slices.Equal(f.BlockTypes, []string{"table"}) {
					t.Errorf("filters %+v, want block types [table]", f)
				}
			}},
		{"block types that exclude each other match nothing", `{"query":"malaria","num_blocks":5,"search_filters":[
			{"field_name":"block_type","filter_type":"eq","field_value":"table"},
			{"field_name":"block_type","filter_type":"eq","field_value":"infobox"}]}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				if string(b) != `[{"results":[]}]`+"\n" {
					t.Errorf("got %s", b)
				}
			}},
		{"language mismatch matches nothing", `{"query":"malaria","num_blocks":5,"search_filters":[{"field_name":"language","filter_type":"eq","field_value":"fa"}]}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				if string(b) != `[{"results":[]}]`+"\n" {
					t.Errorf("got %s", b)
				}
			}},
		{"v1 shape", `{"query":"` + newbornQuery + `","evi_num":4}`,
			func(t *testing.T, b []byte, seen []rerank.Query) {
				var out WikiChatV1Response
				mustJSON(t, b, &out)
				if len(out.Passages) != 4 || out.PassageIDs[0] != newbornID || out.PassageRanks[3] != 4 || out.PassageScores[0] != 6 {
					t.Fatalf("v1 response %s", b)
				}
				var sum float64
				for _, p := range out.PassageProbs {
					sum += p
				}
				if math.Abs(sum-1) > 1e-9 || !strings.HasPrefix(out.Passages[0], "Microstructural development") {
					t.Errorf("probabilities sum to %v; passage %.60q", sum, out.Passages[0])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(l.latest().lastQueries())
			w := do(s, "POST", "/search", tt.body)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			tt.check(t, w.Body.Bytes(), l.latest().lastQueries()[before:])
		})
	}
}

func TestWikiChatInvalid(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	list := func(n int, item string) string {
		return `[` + strings.TrimSuffix(strings.Repeat(`"`+item+`",`, n), ",") + `]`
	}
	tests := []struct{ name, body, msg string }{
		{"malformed", `{"query":"a",`, `malformed JSON: unexpected end of input`},
		{"unknown field", `{"query":"a","num_blocks":1,"k":3}`, `unknown field "k"`},
		{"fields in capitals", `{"QUERY":"a","Num_Blocks":2}`, `field "QUERY": field names are lower case as the API spells them: did you mean "query"?`},
		{"missing query", `{"num_blocks":1}`, `missing "query"`},
		{"missing num_blocks", `{"query":"a"}`, `missing "num_blocks"`},
		{"num_blocks zero", `{"query":"a","num_blocks":0}`, `"num_blocks": 0 is out of range 1..300 (max_k)`},
		{"num_blocks over", `{"query":"a","num_blocks":301}`, `"num_blocks": 301 is out of range 1..300 (max_k)`},
		{"num_blocks string", `{"query":"a","num_blocks":"3"}`, `field "num_blocks": want an integer, got JSON string`},
		{"rerank not bool", `{"query":"a","num_blocks":1,"rerank":"yes"}`, `field "rerank": want a boolean, got JSON string`},
		{"num_blocks_to_rerank negative", `{"query":"a","num_blocks":1,"num_blocks_to_rerank":-1}`, `"num_blocks_to_rerank": -1 is out of range 0..1000 (max_candidates)`},
		{"empty string query", `{"query":"","num_blocks":1}`, `"query": empty query`},
		{"empty list", `{"query":[],"num_blocks":1}`, `"query": empty list: want 1 to 100 queries`},
		{"101 queries", `{"query":` + list(101, "q") + `,"num_blocks":1}`, `"query": 101 queries, over the limit of 100 (max_queries)`},
		{"513 characters", `{"query":["ok","` + strings.Repeat("x", 513) + `"],"num_blocks":1}`, `"query"[1]: 513 characters, over the limit of 512 (max_query_chars)`},
		{"non-string item", `{"query":["a",1],"num_blocks":1}`, `"query"[1]: want a string`},
		{"query a number", `{"query":5,"num_blocks":1}`, `"query": want a string or a list of strings`},
		{"filter type", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"language","filter_type":"like","field_value":"en"}]}`,
			`search_filters[0]: filter_type "like": want eq, ne, lt, lte, gt or gte`},
		{"filter field", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"speaker","filter_type":"eq","field_value":"John Doe"}]}`,
			`search_filters[0]: field_name "speaker" is not supported (want last_edit_date, source, language or block_type)`},
		{"filter block type value", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"block_type","filter_type":"eq","field_value":"list"}]}`,
			`search_filters[0]: block_type "list": want text, table, infobox`},
		{"filter block type op", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"block_type","filter_type":"gt","field_value":"table"}]}`,
			`search_filters[0]: filter_type "gt" is not supported on block_type (want eq or ne)`},
		{"filter missing value", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"source","filter_type":"eq"}]}`,
			`search_filters[0]: "field_name", "filter_type" and "field_value" are required`},
		{"filter extra key", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"source","filter_type":"eq","field_value":"x","op":1}]}`,
			`search_filters[0]: unknown field "op"`},
		{"filter bad date", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"last_edit_date","filter_type":"gt","field_value":"last week"}]}`,
			`search_filters[0]: field_value "last week" is not a datetime: want a digit at byte 0 (RFC 3339, seconds and zone optional; a date alone means its midnight UTC)`},
		{"filter ne date", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"last_edit_date","filter_type":"ne","field_value":"2020-01-01"}]}`,
			`search_filters[0]: filter_type "ne" is not supported on last_edit_date (want eq, lt, lte, gt or gte)`},
		// A null or empty field_value had read as "": source eq "" kept every passage without
		// a source, language eq "" matched nothing, without a word to the client.
		{"filter null source", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"source","filter_type":"eq","field_value":null}]}`,
			`search_filters[0]: "field_value" of source is null: want a non-empty string`},
		{"filter empty source", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"source","filter_type":"eq","field_value":""}]}`,
			`search_filters[0]: "field_value" of source is empty: want a non-empty string`},
		{"filter blank source", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"source","filter_type":"eq","field_value":" "}]}`,
			`search_filters[0]: "field_value" of source is empty: want a non-empty string`},
		{"filter null language", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"block_type","filter_type":"ne","field_value":"table"},{"field_name":"language","filter_type":"ne","field_value":null}]}`,
			`search_filters[1]: "field_value" of language is null: want a non-empty string`},
		{"filter empty language", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"language","filter_type":"eq","field_value":""}]}`,
			`search_filters[0]: "field_value" of language is empty: want a non-empty string`},
		{"filter null date", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"last_edit_date","filter_type":"gt","field_value":null}]}`,
			`search_filters[0]: "field_value" of last_edit_date is null: want a non-empty string`},
		{"filter null block type", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"block_type","filter_type":"eq","field_value":null}]}`,
			`search_filters[0]: "field_value" of block_type is null: want a non-empty string`},
		{"filter number source", `{"query":"a","num_blocks":1,"search_filters":[{"field_name":"source","filter_type":"eq","field_value":3}]}`,
			`search_filters[0]: source field_value: want a string`},
		{"v1 evi_num zero", `{"query":"a","evi_num":0}`, `"evi_num": 0 is out of range 1..300 (max_k)`},
		{"v1 evi_num string", `{"query":"a","evi_num":"5"}`, `field "evi_num": want an integer, got JSON string`},
		{"v1 missing query", `{"evi_num":5}`, `missing "query"`},
		{"v1 list query", `{"query":["a"],"evi_num":5}`, `field "query": want a string, got JSON array`},
		{"v1 extra field", `{"query":"a","evi_num":5,"num_blocks":3}`, `unknown field "num_blocks"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, "POST", "/search", tt.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			var e ErrorResponse
			mustJSON(t, w.Body.Bytes(), &e)
			if e.Error != tt.msg || e.Detail != tt.msg {
				t.Errorf("error\n got %s (detail %s)\nwant %s", e.Error, e.Detail, tt.msg)
			}
		})
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %.200s: %v", b, err)
	}
}
