package server

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// WikiChat's own request examples (stanford-oval/WikiChat: the SearchQuery schema examples,
// tests/test_search_query.py, the retriever server's start-up queries, the language search
// filter example, and the v1 ColBERT server's {"query", "evi_num"}), replayed against Kairos.
var wikiChatExamples = []struct{ name, body string }{
	{"schema example", `{"query": ["What is GPT-4?", "What is LLaMA-3?"], "num_blocks": 3}`},
	{"string query", `{"query": "What is GPT-4?", "num_blocks": 1}`},
	{"long query", `{"query": "` + strings.Repeat("What is GPT-4?", 10) + `", "num_blocks": 1}`},
	{"100 queries", `{"query": [` + strings.TrimSuffix(strings.Repeat(`"query",`, 100), ",") + `], "num_blocks": 1}`},
	{"start-up queries", `{"query": ["Tell me about Haruki Murakami.", "who is the current monarch of the UK?", "شهرستان مرند کجاست؟"], "num_blocks": 3}`},
	{"all fields", `{"query": ["What is GPT-4?"], "num_blocks": 3, "rerank": false, "num_blocks_to_rerank": 10,
		"search_filters": [{"field_name": "language", "filter_type": "eq", "field_value": "en"}]}`},
	{"v1", `{"query": "What is GPT-4?", "evi_num": 5}`},
}

// wikiChatBlockTypes is WikiChat's SearchResultBlock as JSON types. Its model forbids extra
// fields, so a block must carry exactly these.
var wikiChatBlockTypes = map[string]string{
	"document_title": "string", "section_title": "string", "content": "string",
	"last_edit_date": "string|null", "url": "string|null", "block_metadata": "object",
	"similarity_score": "number", "probability_score": "number",
}

var wikiChatV1Types = map[string]string{
	"passages": "array of string", "passage_ids": "array of string", "passage_ranks": "array of number",
	"passage_scores": "array of number", "passage_probs": "array of number",
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		elem := map[string]bool{}
		for _, e := range x {
			elem[jsonType(e)] = true
		}
		if len(elem) == 1 {
			for k := range elem {
				return "array of " + k
			}
		}
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// checkFields asserts that obj has exactly the fields of want, each of the wanted type.
func checkFields(t *testing.T, where string, obj map[string]any, want map[string]string) {
	t.Helper()
	for k, typ := range want {
		v, ok := obj[k]
		if !ok {
			t.Errorf("%s: missing field %q", where, k)
			continue
		}
		if got := jsonType(v); !strings.Contains("|"+typ+"|", "|"+got+"|") {
			t.Errorf("%s: field %q is %s, want %s", where, k, got, typ)
		}
	}
	for k := range obj {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: extra field %q (WikiChat's models forbid extras)", where, k)
		}
	}
}

func TestWikiChatContract(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	var golden bytes.Buffer
	for _, ex := range wikiChatExamples {
		w := do(s, "POST", "/search", ex.body)
		if w.Code != 200 {
			t.Fatalf("%s: status %d: %s", ex.name, w.Code, w.Body)
		}
		fmt.Fprintf(&golden, "== %s\n", ex.name)
		var generic any
		mustJSON(t, w.Body.Bytes(), &generic)
		if obj, ok := generic.(map[string]any); ok { // v1
			checkFields(t, ex.name, obj, wikiChatV1Types)
			ids, probs := obj["passage_ids"].([]any), obj["passage_probs"].([]any)
			for i := range ids {
				fmt.Fprintf(&golden, "%d %v %.4f\n", i+1, ids[i], probs[i])
			}
			continue
		}
		results, ok := generic.([]any)
		if !ok {
			t.Fatalf("%s: response is %s, want an array of query results", ex.name, jsonType(generic))
		}
		var req struct{ Query any }
		mustJSON(t, []byte(ex.body), &req)
		if n, ok := req.Query.([]any); ok && len(results) != len(n) || !ok && len(results) != 1 {
			t.Errorf("%s: %d results for the queries %v", ex.name, len(results), req.Query)
		}
		for qi, r := range results {
			qr, ok := r.(map[string]any)
			if !ok {
				t.Fatalf("%s: result %d is %s", ex.name, qi, jsonType(r))
			}
			blocks, ok := qr["results"].([]any)
			if len(qr) != 1 || !ok {
				t.Fatalf("%s: result %d = %v, want exactly {\"results\": [...]}", ex.name, qi, qr)
			}
			for bi, b := range blocks {
				blk := b.(map[string]any)
				checkFields(t, fmt.Sprintf("%s: query %d block %d", ex.name, qi, bi), blk, wikiChatBlockTypes)
				meta := blk["block_metadata"].(map[string]any)
				fmt.Fprintf(&golden, "q%d %s %v %v\n", qi, meta["passage_id"], blk["similarity_score"], blk["probability_score"])
			}
		}
	}
	compareGolden(t, "wikichat_contract.golden", golden.Bytes())
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got %q\nwant %q\n(run go test -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}
