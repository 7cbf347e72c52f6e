package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/server"
)

const (
	newbornQuery = "cerebral white matter diffusion tensor newborn"
	newbornDoc   = "4983"
)

var blockFields = map[string]string{
	"document_title": "string", "section_title": "string", "content": "string",
	"last_edit_date": "string|null", "url": "string|null", "block_metadata": "object",
	"similarity_score": "number", "probability_score": "number",
}

// wikiChat21 posts a WikiChat 2.1 request and checks every field its client reads: one
// {"results": [...]} per query, blocks of exactly SearchResultBlock's fields, values its
// pydantic model accepts (a title, an http(s) URL or null), scores best first.
func wikiChat21(t *testing.T, ts *httptest.Server, body string, queries int) ([][]map[string]any, http.Header) {
	t.Helper()
	resp, b := call(t, ts, "POST", "/search", body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: status %d: %s", body, resp.StatusCode, b)
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if len(out) != queries {
		t.Fatalf("%d query results for %d queries", len(out), queries)
	}
	all := make([][]map[string]any, len(out))
	for qi, qr := range out {
		raw, ok := qr["results"].([]any)
		if len(qr) != 1 || !ok {
			t.Fatalf("query %d: %v, want exactly {\"results\": [...]}", qi, qr)
		}
		var scores, probs []float64
		for bi, r := range raw {
			blk := r.(map[string]any)
			where := fmt.Sprintf("%s: query %d block %d", body, qi, bi)
			exactFields(t, where, blk, blockFields)
			meta := blk["block_metadata"].(map[string]any)
			title, _ := blk["document_title"].(string)
			if title == "" {
				t.Errorf("%s: empty document_title", where)
			}
			if strings.HasPrefix(blk["content"].(string), title+" | ") {
				t.Errorf("%s: content keeps the title prefix", where)
			}
			if u, ok := blk["url"].(string); ok {
				if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || !strings.HasSuffix(u, "/"+meta["doc_id"].(string)) {
					t.Errorf("%s: url %q", where, u)
				}
			}
			checkDate(t, where, blk["last_edit_date"])
			if meta["language"] != "en" || meta["source"] != "scifact" || meta["rank"] != float64(bi+1) ||
				!strings.HasPrefix(meta["passage_id"].(string), meta["doc_id"].(string)+"#") {
				t.Errorf("%s: block_metadata %v", where, meta)
			}
			scores = append(scores, blk["similarity_score"].(float64))
			probs = append(probs, blk["probability_score"].(float64))
			all[qi] = append(all[qi], blk)
		}
		checkProbs(t, body, scores, probs, 0.01)
	}
	return all, resp.Header
}

func docIDs(blocks []map[string]any) []string {
	var ids []string
	for _, b := range blocks {
		ids = append(ids, b["block_metadata"].(map[string]any)["doc_id"].(string))
	}
	return ids
}

// TestWikiChatClients replays the request shapes of WikiChat 2.1 (POST /search), 2.0 (POST
// /v2/search) and 1.0 (GET /search with a JSON body) against a real server over a real index,
// once per lexical engine.
func TestWikiChatClients(t *testing.T) {
	for _, lexical := range []string{"bleve", "postings"} {
		t.Run(lexical, func(t *testing.T) {
			ts := wikiChatServer(t, lexical, nil)
			t.Run("2.1", func(t *testing.T) { wikiChat21Shapes(t, ts) })
			t.Run("2.1 filters", func(t *testing.T) { wikiChat21Filters(t, ts) })
			t.Run("2.0", func(t *testing.T) { wikiChat20(t, ts) })
			t.Run("1.0", func(t *testing.T) { wikiChat10(t, ts) })
		})
	}
}

func wikiChat21Shapes(t *testing.T, ts *httptest.Server) {
	out, h := wikiChat21(t, ts, `{"query": ["`+newbornQuery+`", "myelodysplastic syndrome"], "num_blocks": 3}`, 2)
	if len(out[0]) != 3 || docIDs(out[0])[0] != newbornDoc || h.Get("X-Kairos-Rerank") != "" {
		t.Errorf("top blocks %v, rerank header %q", docIDs(out[0]), h.Get("X-Kairos-Rerank"))
	}
	// "rerank": true without a cross-encoder: the same blocks, and the answer says so.
	re, h := wikiChat21(t, ts, `{"query": "`+newbornQuery+`", "num_blocks": 3, "rerank": true, "num_blocks_to_rerank": 10}`, 1)
	if strings.Join(docIDs(re[0]), ",") != strings.Join(docIDs(out[0]), ",") || !strings.Contains(h.Get("X-Kairos-Rerank"), "no cross-encoder") {
		t.Errorf("rerank: %v, header %q", docIDs(re[0]), h.Get("X-Kairos-Rerank"))
	}
	for _, b := range re[0] {
		if note, _ := b["block_metadata"].(map[string]any)["rerank"].(string); !strings.HasPrefix(note, "skipped") {
			t.Errorf("block_metadata.rerank %q", note)
		}
	}
	// A passage without a title carries its document id as document_title; ftp and
	// relative URLs come as null. Document 5 (every 10th from it) has no title.
	titleless, urls := 0, map[string]int{}
	for _, q := range []string{"bone marrow", "gene expression", "protein cell", "patients risk"} {
		res, _ := wikiChat21(t, ts, `{"query": "`+q+`", "num_blocks": 40}`, 1)
		for _, b := range res[0] {
			if b["document_title"] == b["block_metadata"].(map[string]any)["doc_id"] {
				titleless++
			}
			urls[jsonKindOf(b["url"])]++
		}
	}
	if titleless == 0 || urls["null"] == 0 || urls["string"] == 0 {
		t.Errorf("%d title-less blocks, urls %v: the corpus's cases did not come up", titleless, urls)
	}
}

// wikiChat21Filters: WikiChat's filters on the real engines. A date alone is its midnight,
// as in Qdrant; a language or source no passage has matches nothing.
func wikiChat21Filters(t *testing.T, ts *httptest.Server) {
	day := time.Date(2016, 4, 22, 0, 0, 0, 0, time.UTC)
	later := day.Add(10*time.Hour + 49*time.Minute)
	tests := []struct {
		name    string
		filters string
		pass    func(time.Time) bool // nil: no hit at all
		must    []time.Time          // dates that must come up
	}{
		{"language eq fr", `{"field_name": "language", "filter_type": "eq", "field_value": "fr"}`, nil, nil},
		{"language ne en", `{"field_name": "language", "filter_type": "ne", "field_value": "en"}`, nil, nil},
		{"source eq nothing", `{"field_name": "source", "filter_type": "eq", "field_value": "wikipedia"}`, nil, nil},
		{"two sources", `{"field_name": "source", "filter_type": "eq", "field_value": "scifact"},
			{"field_name": "source", "filter_type": "eq", "field_value": "wikipedia"}`, nil, nil},
		{"language eq en and source", `{"field_name": "language", "filter_type": "eq", "field_value": "EN"},
			{"field_name": "source", "filter_type": "eq", "field_value": "scifact"}`, func(time.Time) bool { return true }, []time.Time{day, later}},
		{"gt date", `{"field_name": "last_edit_date", "filter_type": "gt", "field_value": "2016-04-22"}`,
			func(d time.Time) bool { return d.After(day) }, []time.Time{later}},
		{"lte date", `{"field_name": "last_edit_date", "filter_type": "lte", "field_value": "2016-04-22"}`,
			func(d time.Time) bool { return !d.After(day) }, []time.Time{day}},
		{"eq midnight with seconds", `{"field_name": "last_edit_date", "filter_type": "eq", "field_value": "2016-04-22 00:00:00"}`,
			func(d time.Time) bool { return d.Equal(day) }, []time.Time{day}},
		{"gte minutes", `{"field_name": "last_edit_date", "filter_type": "gte", "field_value": "2016-04-22T10:49"},
			{"field_name": "last_edit_date", "filter_type": "lt", "field_value": "2016-04-23"}`,
			func(d time.Time) bool { return d.Equal(later) }, []time.Time{later}},
	}
	for _, tc := range tests {
		out, _ := wikiChat21(t, ts, `{"query": ["cells", "patients"], "num_blocks": 60, "search_filters": [`+tc.filters+`]}`, 2)
		seen := map[time.Time]bool{}
		for qi, blocks := range out {
			if tc.pass == nil && len(blocks) != 0 {
				t.Errorf("%s: query %d: %d blocks, want none", tc.name, qi, len(blocks))
			}
			for _, b := range blocks {
				d := checkDate(t, tc.name, b["last_edit_date"])
				seen[d] = true
				if tc.pass != nil && !tc.pass(d) {
					t.Errorf("%s: block dated %s passes", tc.name, d)
				}
			}
		}
		for _, d := range tc.must {
			if !seen[d] {
				t.Errorf("%s: no block dated %s", tc.name, d)
			}
		}
	}
}

var v20Fields = map[string]string{
	"text": "array", "title": "array", "full_section_title": "array", "block_type": "array",
	"language": "array", "prob": "array", "score": "array", "last_edit_date": "array",
}

// wikiChat20 posts WikiChat 2.0's request and reads, per query, the parallel lists.
func wikiChat20(t *testing.T, ts *httptest.Server) {
	for _, tc := range []struct {
		name, languages string
		n               int
	}{{"languages en", `, "languages": ["en", "de"]`, 4}, {"no languages", ``, 4}, {"languages fr", `, "languages": ["fr"]`, 0}} {
		resp, b := call(t, ts, "POST", "/v2/search", `{"query": ["`+newbornQuery+`", "myelodysplastic syndrome"], "num_blocks": 4`+tc.languages+`}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", tc.name, resp.StatusCode, b)
		}
		var out []map[string]any
		if err := json.Unmarshal(b, &out); err != nil || len(out) != 2 {
			t.Fatalf("%s: %d results, %v: %s", tc.name, len(out), err, b)
		}
		for qi, r := range out {
			exactFields(t, tc.name, r, v20Fields)
			for k := range v20Fields {
				if l, _ := r[k].([]any); len(l) != tc.n {
					t.Fatalf("%s: query %d: %s has %d entries, want %d", tc.name, qi, k, len(l), tc.n)
				}
			}
			var scores, probs []float64
			for i := range tc.n {
				at := func(k string) any { return r[k].([]any)[i] }
				title, _ := at("title").(string)
				text, _ := at("text").(string)
				fst, _ := at("full_section_title").(string)
				if title == "" || text == "" || strings.HasPrefix(text, title+" | ") || !strings.HasPrefix(fst, title) ||
					at("block_type") != "text" || at("language") != "en" {
					t.Errorf("%s: query %d entry %d: title %q text %.40q section %q type %v language %v",
						tc.name, qi, i, title, text, fst, at("block_type"), at("language"))
				}
				checkDate(t, tc.name, at("last_edit_date"))
				scores, probs = append(scores, at("score").(float64)), append(probs, at("prob").(float64))
			}
			checkProbs(t, tc.name, scores, probs, 1e-9)
		}
		if tc.n > 0 && !strings.HasPrefix(out[0]["title"].([]any)[0].(string), "Microstructural development of human newborn") {
			t.Errorf("%s: top title %.60q", tc.name, out[0]["title"].([]any)[0])
		}
	}
}

// wikiChat10 sends WikiChat 1.0's GET with a JSON body (and the same by POST).
func wikiChat10(t *testing.T, ts *httptest.Server) {
	var first []byte
	for _, method := range []string{"GET", "POST"} {
		resp, b := call(t, ts, method, "/search", `{"query": "`+newbornQuery+`", "evi_num": 5}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", method, resp.StatusCode, b)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		exactFields(t, method, out, map[string]string{"passages": "array", "passage_ids": "array",
			"passage_ranks": "array", "passage_scores": "array", "passage_probs": "array"})
		var scores, probs []float64
		for i := range 5 {
			p, _ := out["passages"].([]any)[i].(string)
			id, _ := out["passage_ids"].([]any)[i].(string)
			if p == "" || !strings.Contains(id, "#") || out["passage_ranks"].([]any)[i] != float64(i+1) {
				t.Errorf("%s: entry %d: passage %.30q id %q rank %v", method, i, p, id, out["passage_ranks"].([]any)[i])
			}
			scores = append(scores, out["passage_scores"].([]any)[i].(float64))
			probs = append(probs, out["passage_probs"].([]any)[i].(float64))
		}
		checkProbs(t, method, scores, probs, 1e-9)
		if id := out["passage_ids"].([]any)[0].(string); !strings.HasPrefix(id, newbornDoc+"#") {
			t.Errorf("%s: top passage %s", method, id)
		}
		if first == nil {
			first = b
		} else if string(first) != string(b) {
			t.Errorf("GET and POST answer differently")
		}
	}
}

// TestWikiChatTimeout: on a real index, a request out of time says it timed out
// (not "server busy") with Retry-After, for every WikiChat shape.
func TestWikiChatTimeout(t *testing.T) {
	ts := wikiChatServer(t, "bleve", func(o *server.Options) { o.Timeout = time.Nanosecond })
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/search", `{"query": "cells", "num_blocks": 3}`},
		{"GET", "/search", `{"query": "cells", "evi_num": 3}`},
		{"POST", "/v2/search", `{"query": ["cells"], "num_blocks": 3}`},
	} {
		resp, b := call(t, ts, tc.method, tc.path, tc.body)
		var e struct{ Error, Detail string }
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get("Retry-After") == "" ||
			e.Detail != e.Error || !strings.Contains(e.Error, "timed out after 1ns") {
			t.Errorf("%s %s: %d Retry-After %q: %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
}
