package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/internal/version"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// The SciFact abstract whose title shares every term of newbornQuery.
const (
	newbornQuery = "cerebral white matter diffusion tensor newborn"
	newbornID    = "4983#0"
)

func TestSearchValid(t *testing.T) {
	s, l := newTestServer(t, Options{})
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, r SearchResponse, seen []rerank.Query)
	}{
		{"single-query shorthand", `{"text":"` + newbornQuery + `","k":3}`,
			func(t *testing.T, r SearchResponse, seen []rerank.Query) {
				if len(r.Results) != 1 || len(r.Results[0].Hits) != 3 {
					t.Fatalf("want 1 result with 3 hits, got %+v", r.Results)
				}
				h := r.Results[0].Hits[0]
				if h.PassageID != newbornID || h.DocID != "4983" || h.Rank != 1 || h.Score != 6 || h.Source != "scifact" {
					t.Errorf("top hit = %+v", h)
				}
				if !strings.HasPrefix(h.Text, h.Title+" | ") {
					t.Errorf("text %q lacks its title prefix", h.Text)
				}
				if r.Results[0].Mode != "bm25" || seen[0].K != 3 || seen[0].Mode != search.ModeBM25 {
					t.Errorf("mode %q, engine saw %+v", r.Results[0].Mode, seen[0])
				}
			}},
		{"batch keeps order and defaults k to 10", `{"queries":[{"text":"` + newbornQuery + `"},{"text":"myelodysplasia suppressor cells"}]}`,
			func(t *testing.T, r SearchResponse, seen []rerank.Query) {
				if len(r.Results) != 2 || r.Results[0].Query != newbornQuery || r.Results[1].Query != "myelodysplasia suppressor cells" {
					t.Fatalf("results out of order: %+v", r.Results)
				}
				if len(r.Results[0].Hits) != 10 || r.Results[1].Hits[0].PassageID != "5836#0" {
					t.Errorf("hits: %d, second top %s", len(r.Results[0].Hits), r.Results[1].Hits[0].PassageID)
				}
			}},
		{"explain, rerank list, time and filters reach the engine",
			`{"text":"` + newbornQuery + `","explain":true,"rerank":["cross","time"],"time":"1990..1998","candidates":50,
			  "filters":{"source":["scifact","other"],"date_from":"1990-01-01","date_to":"1998-12-31"}}`,
			func(t *testing.T, r SearchResponse, seen []rerank.Query) {
				q := seen[0]
				want := time.Date(1998, 12, 31, 23, 59, 59, 999999999, time.UTC)
				if !q.Filters.DateTo.Equal(want) || !q.Filters.DateFrom.Equal(time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("dates %v..%v", q.Filters.DateFrom, q.Filters.DateTo)
				}
				if len(q.Filters.Sources) != 2 || q.Time != (timex.Spec{Kind: timex.KindRange, From: 1990, To: 1998}) ||
					len(q.Rerank) != 2 || q.Rerank[0] != rerank.StageCross || q.Candidates != 50 || !q.Explain {
					t.Errorf("engine saw %+v", q)
				}
				// SciFact abstracts carry no dates, so a date filter leaves nothing.
				if n := len(r.Results[0].Hits); n != 0 {
					t.Errorf("%d hits passed a date filter on undated passages", n)
				}
				if got := r.Results[0].Rerank; len(got) != 2 || got[1] != "time" {
					t.Errorf("rerank echoed as %v", got)
				}
			}},
		{"explain fills the breakdown", `{"text":"` + newbornQuery + `","k":1,"explain":true}`,
			func(t *testing.T, r SearchResponse, seen []rerank.Query) {
				x := r.Results[0].Hits[0].Explain
				if x == nil || x.Retrieval != 6 || x.Final != 6 || len(x.Notes) != 1 {
					t.Errorf("explain = %+v", x)
				}
			}},
		{"time rerank without a time spec means auto", `{"text":"malaria","rerank":"time"}`,
			func(t *testing.T, r SearchResponse, seen []rerank.Query) {
				if seen[0].Time.Kind != timex.KindAuto {
					t.Errorf("time = %+v, want auto", seen[0].Time)
				}
			}},
		{"query of exactly 512 characters", `{"text":"` + strings.Repeat("é", 512) + `"}`,
			func(t *testing.T, r SearchResponse, seen []rerank.Query) {
				if len(r.Results[0].Hits) != 0 {
					t.Errorf("hits for a nonsense query: %d", len(r.Results[0].Hits))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(l.latest().lastQueries())
			w := do(s, "POST", "/v1/search", tt.body)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var r SearchResponse
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			tt.check(t, r, l.latest().lastQueries()[before:])
		})
	}
}

func TestSearchInvalid(t *testing.T) {
	s, _ := newTestServer(t, Options{MaxBodyBytes: 4096})
	many := `{"queries":[` + strings.TrimSuffix(strings.Repeat(`{"text":"a"},`, 101), ",") + `]}`
	tests := []struct {
		name, body string
		status     int
		msg        string
	}{
		{"empty body", ``, 400, `empty request body: want a JSON object`},
		{"truncated JSON", `{"text":`, 400, `malformed JSON: unexpected end of input`},
		{"syntax error", `{"text": "x",}`, 400, `malformed JSON at byte 14: invalid character '}' looking for beginning of object key string`},
		{"trailing data", `{"text":"a"} {}`, 400, `malformed JSON: unexpected data after the top-level value`},
		{"array body", `[1]`, 400, `request body: want an object, got JSON array`},
		{"unknown field", `{"text":"a","bogus":1}`, 400, `unknown field "bogus"`},
		{"unknown nested field", `{"queries":[{"text":"a","filters":{"lang":"en"}}]}`, 400, `queries[0].filters: unknown field "lang"`},
		{"a field in capitals", `{"TEXT":"a"}`, 400, `field "TEXT": field names are lower case as the API spells them: did you mean "text"?`},
		{"a field twice in two cases", `{"text":"a","Text":"b"}`, 400, `field "Text": field names are lower case as the API spells them: did you mean "text"?`},
		{"a field twice", `{"text":"a","k":2,"k":3}`, 400, `field "k" appears twice in one object: give it once`},
		{"nested deep", strings.Repeat("[", 4000), 400, `JSON nested deeper than 32 levels at ` + strings.Repeat("[0]", 33) + `: no request field nests so deep`},
		{"a nested field in another case", `{"queries":[{"text":"a"},{"text":"b","Filters":{}}]}`, 400, `field "queries[1].Filters": field names are lower case as the API spells them: did you mean "filters"?`},
		{"k as string", `{"queries":[{"text":"a","k":"3"}]}`, 400, `field "queries.k": want an integer, got JSON string`},
		{"k fractional", `{"queries":[{"text":"a","k":1.5}]}`, 400, `field "queries.k": want an integer, got JSON number 1.5`},
		{"queries not an array", `{"queries":"x"}`, 400, `field "queries": want an array, got JSON string`},
		{"explain not a bool", `{"text":"a","explain":"yes"}`, 400, `field "explain": want a boolean, got JSON string`},
		{"nothing asked", `{}`, 400, `missing "queries" (or "text" for a single query)`},
		{"both forms", `{"queries":[{"text":"a"}],"text":"b"}`, 400, `give either "queries" or the fields of a single query at the top level, not both`},
		{"empty batch", `{"queries":[]}`, 400, `"queries" is empty: want 1 to 100 queries`},
		{"too many queries", many, 400, `"queries" has 101 queries, over the limit of 100 (max_queries)`},
		{"empty text", `{"queries":[{"text":"a"},{"text":"  "}]}`, 400, `queries[1].text: empty query`},
		{"text too long", `{"text":"` + strings.Repeat("é", 513) + `"}`, 400, `text: 513 characters, over the limit of 512 (max_query_chars)`},
		{"k over limit", `{"text":"a","k":301}`, 400, `k: 301 is over the limit of 300 (max_k)`},
		{"k negative", `{"queries":[{"text":"a","k":-1}]}`, 400, `queries[0].k: -1: want a positive number of hits`},
		{"k zero", `{"text":"a","k":0}`, 400, `k: 0: want a positive number of hits`},
		{"bad now", `{"text":"a","now":"yesterday"}`, 400, `now: "yesterday" is not a date (want YYYY-MM-DD or RFC 3339)`},
		{"bad half-life", `{"queries":[{"text":"a","recent_half_life_years":-2}]}`, 400, `queries[0].recent_half_life_years: -2: want a number of years in (0, 1000]`},
		{"unknown fusion", `{"text":"a","fusion":"sum"}`, 400, `fusion: "sum": want rrf or convex`},
		{"candidates over limit", `{"text":"a","candidates":1001}`, 400, `candidates: 1001 is over the limit of 1000 (max_candidates)`},
		{"unknown mode", `{"text":"a","mode":"fuzzy"}`, 400, `mode: "fuzzy": want bm25, dense or hybrid`},
		{"mode the index lacks", `{"text":"a","mode":"dense"}`, 400, `mode dense is not supported: this index has no dense vectors: build them with kairos index --model DIR, or ask for mode bm25`},
		{"mode the index lacks, in a batch", `{"queries":[{"text":"a"},{"text":"b","mode":"hybrid"}]}`, 400, `queries[1]: mode hybrid is not supported: this index has no dense vectors: build them with kairos index --model DIR, or ask for mode bm25`},
		{"bad time spec", `{"queries":[{"text":"a","time":"1998..1990"}]}`, 400, `queries[0].time: invalid time spec "1998..1990": range is reversed (1998 > 1990)`},
		{"gibberish time spec", `{"text":"a","time":"yesterday"}`, 400, `time: invalid time spec "yesterday": want none, recent, auto, year=YYYY, YYYY..YYYY or from YYYY to YYYY`},
		{"rerank wrong order", `{"text":"a","rerank":"time,cross"}`, 400, `rerank: rerank "time,cross": the cross-encoder must run first (write cross,time): a time signal applied before it is erased`},
		{"rerank wrong type", `{"text":"a","rerank":5}`, 400, `field "rerank": want a string or an array of strings, got JSON number`},
		{"bad date", `{"text":"a","filters":{"date_from":"01/02/2020"}}`, 400, `filters.date_from: "01/02/2020" is not a date (want YYYY-MM-DD or RFC 3339)`},
		{"reversed dates", `{"text":"a","filters":{"date_from":"2021-01-01","date_to":"2020-01-01"}}`, 400, `filters.date_to: 2020-01-01 is before date_from 2021-01-01`},
		{"date as number", `{"queries":[{"text":"a","filters":{"date_from":3}}]}`, 400, `field "queries.filters.date_from": want a string, got JSON number`},
		{"empty source", `{"text":"a","filters":{"source":["scifact",""]}}`, 400, `filters.source[1]: empty string`},
		{"body over limit", `{"text":"` + strings.Repeat("a", 5000) + `"}`, 413, `request body exceeds the limit of 4096 bytes (max_body_bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, "POST", "/v1/search", tt.body)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if got := errorOf(t, w); got != tt.msg {
				t.Errorf("error\n got %s\nwant %s", got, tt.msg)
			}
		})
	}
}

// A search's query is in one place: a GET with a body and a POST with URL parameters are
// refused (they ran without the part in the other place: a GET's filter in its body was
// dropped, and the search ran wider).
func TestSearchQueryInOnePlace(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	for _, tc := range []struct{ name, method, path, body, msg string }{
		{"GET with a body", "GET", "/v1/search?q=vitamin&k=1", `{"filters":{"source":"nosuch"}}`, "a GET search takes its query in the URL's parameters, not a body: send the body with POST"},
		{"POST with parameters", "POST", "/v1/search?q=vitamin", `{"text":"paris"}`, "a POST search takes its query in the body, not the URL's parameters: send them as the body's fields, or use GET"},
	} {
		w := do(s, tc.method, tc.path, tc.body)
		if w.Code != 400 || errorOf(t, w) != tc.msg {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
	}
	if w := do(s, "GET", "/v1/search?q=vitamin&k=1", ""); w.Code != 200 {
		t.Errorf("GET without a body: %d %s", w.Code, w.Body)
	}
}

// TestEmptyListFilterRefused: "source": "" on /v1 is refused, as "source": [""] is, where it
// had meant no filter at all (request.List had read "" as no list); so are language and
// block_type, which read alike.
func TestEmptyListFilterRefused(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct{ name, body, msg string }{
		{"source", `{"text":"malaria","filters":{"source":""}}`, "filters.source[0]: empty string"},
		{"source blank", `{"text":"malaria","filters":{"source":"  "}}`, "filters.source[0]: empty string"},
		{"source in list", `{"text":"malaria","filters":{"source":[""]}}`, "filters.source[0]: empty string"},
		{"language", `{"text":"malaria","filters":{"language":""}}`, "filters.language[0]: empty string"},
		{"block_type", `{"text":"malaria","filters":{"block_type":""}}`, `filters.block_type[0]: "" is not a block type (want text, table, infobox)`},
		{"in a batch", `{"queries":[{"text":"a"},{"text":"malaria","filters":{"source":""}}]}`, "queries[1].filters.source[0]: empty string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, "POST", "/v1/search", tc.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			wantError(t, w.Body.Bytes(), tc.msg)
		})
	}
	if w := do(s, "POST", "/v1/search", `{"text":"malaria","filters":{"source":null}}`); w.Code != http.StatusOK {
		t.Errorf("source null: status %d: %s", w.Code, w.Body)
	}
}

func TestPassageAndStats(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct {
		name, path string
		status     int
		check      func(t *testing.T, body []byte)
	}{
		{"passage by escaped id", "/v1/passages/4983%230", 200, func(t *testing.T, b []byte) {
			var p PassageResponse
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if p.PassageID != newbornID || p.DocID != "4983" || !strings.HasPrefix(p.Title, "Microstructural development") {
				t.Errorf("passage = %+v", p)
			}
		}},
		{"unknown passage", "/v1/passages/nope%230", 404, func(t *testing.T, b []byte) {
			wantError(t, b, `passage "nope#0": not found`)
		}},
		// curl .../v1/passages/4983#0 sends /v1/passages/4983: a client never sends a URL's
		// fragment. The 404 says how to write the '#'.
		{"id cut at an unescaped '#'", "/v1/passages/4983", 404, func(t *testing.T, b []byte) {
			wantError(t, b, `passage "4983" not found; passage ids look like "4983#0", and a URL must write '#' as %23: /v1/passages/4983%230`)
		}},
		{"id cut at '#', in a collection", "/v1/collections/default/passages/4983", 404, func(t *testing.T, b []byte) {
			wantError(t, b, `passage "4983" not found; passage ids look like "4983#0", and a URL must write '#' as %23: /v1/collections/default/passages/4983%230`)
		}},
		{"id with a space cut at '#'", "/v1/passages/a%20b", 404, func(t *testing.T, b []byte) {
			wantError(t, b, `passage "a b" not found; passage ids look like "a b#0", and a URL must write '#' as %23: /v1/passages/a%20b%230`)
		}},
		{"empty id", "/v1/passages/", 400, func(t *testing.T, b []byte) {
			wantError(t, b, "missing passage id")
		}},
		{"stats", "/v1/stats", 200, func(t *testing.T, b []byte) {
			var st StatsResponse
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			if st.Index.Passages != 500 || st.Index.Documents != 500 || st.Index.Sources["scifact"] != 500 ||
				st.Index.DefaultMode != "bm25" || st.Server.Generation != 1 || st.Server.GoVersion == "" ||
				st.Server.Version != version.String() {
				t.Errorf("stats = %+v", st)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, "GET", tt.path, "")
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			tt.check(t, w.Body.Bytes())
		})
	}
}

// postWantError posts body to path and checks the answer's status and error message.
func postWantError(t *testing.T, h http.Handler, path, body string, status int, msg string) {
	t.Helper()
	w := do(h, "POST", path, body)
	if w.Code != status {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantError(t, w.Body.Bytes(), msg)
}

func wantError(t *testing.T, body []byte, msg string) {
	t.Helper()
	e := decodeErrorBody(t, body)
	if e.Error != msg {
		t.Errorf("error\n got %s\nwant %s", e.Error, msg)
	}
}

// decodeErrorBody decodes an error answer, which has one shape on every path: exactly
// "error" and "detail", the same message in both.
func decodeErrorBody(t *testing.T, body []byte) ErrorResponse {
	t.Helper()
	var e ErrorResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	if e.Error == "" || e.Detail != e.Error {
		t.Errorf("error body %s: want the same non-empty message in error and detail", body)
	}
	return e
}
