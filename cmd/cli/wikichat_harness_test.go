package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/server"
)

// WikiChat's clients are replayed against a real server over a real index: SciFact's first
// 200 abstracts, rewritten so that every field a client reads has a case that matters.
const wikiChatDocs = 200

// wikiChatDates cycle over the documents: the day before, the midnight of the filters' day,
// later that day (10:49), and the day after.
var wikiChatDates = []string{"2016-04-21", "2016-04-22", "2016-04-22T10:49:00Z", "2016-04-23"}

// wikiChatCorpus writes the rewritten SciFact head as JSON lines: every 10th document from the
// 5th has no title, URLs cycle over https, ftp and a relative link, and dates as above.
func wikiChatCorpus(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(coreShared(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; i < wikiChatDocs && sc.Scan(); i++ {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		rec := map[string]any{"id": d.ID, "text": d.Text, "date": wikiChatDates[i%len(wikiChatDates)],
			"url": []string{"https://example.org/doc/" + d.ID, "ftp://example.org/" + d.ID, "/wiki/" + d.ID}[i%3]}
		if i%10 != 5 {
			rec["title"] = d.Title
		}
		b, _ := json.Marshal(rec)
		out.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wikiChatServer builds the corpus with the lexical engine named and serves it as `kairos
// serve` does without --model and --cross-model; mod adjusts the server's options.
func wikiChatServer(t *testing.T, lexical string, mod func(*server.Options)) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "scifact-wikichat.jsonl")
	wikiChatCorpus(t, in)
	ctx := context.Background()
	idx := filepath.Join(dir, "index")
	buildIndex(t, idx, indexer.Options{Build: indexer.BuildOptions{Lexical: lexical},
		Inputs: []indexer.InputSpec{{Path: in, Options: corpus.Options{Source: "scifact"}}}})
	opts := server.Options{
		Index:          newLiveIndex(indexer.Location{Dir: idx}, "", retrievalOptions{}),
		WikiChatRerank: []rerank.Stage{}, // as cmdServe sets it without --cross-model
	}
	if mod != nil {
		mod(&opts)
	}
	s, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts
}

// call sends body with method to path and returns the response and its body.
func call(t *testing.T, ts *httptest.Server, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// jsonKindOf names a decoded JSON value's type as a schema does.
func jsonKindOf(v any) string {
	switch v.(type) {
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
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// exactFields fails unless obj has exactly the fields of want, each of one of the wanted
// types ("string|null"): WikiChat's models forbid extra fields.
func exactFields(t *testing.T, where string, obj map[string]any, want map[string]string) {
	t.Helper()
	for k, typ := range want {
		v, ok := obj[k]
		if !ok {
			t.Errorf("%s: missing field %q", where, k)
		} else if !strings.Contains("|"+typ+"|", "|"+jsonKindOf(v)+"|") {
			t.Errorf("%s: field %q is %s, want %s", where, k, jsonKindOf(v), typ)
		}
	}
	for k := range obj {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: extra field %q", where, k)
		}
	}
}

// checkProbs: probabilities in [0, 1], summing to 1 (within the rounding to 3 digits
// when rounded), in the order of the scores, which are best first.
func checkProbs(t *testing.T, where string, scores, probs []float64, tol float64) {
	t.Helper()
	if len(scores) != len(probs) {
		t.Fatalf("%s: %d scores, %d probabilities", where, len(scores), len(probs))
	}
	var sum float64
	for i, p := range probs {
		sum += p
		if p < 0 || p > 1 || i > 0 && (scores[i] > scores[i-1] || p > probs[i-1]+1e-9) {
			t.Errorf("%s: rank %d: score %v prob %v after %v %v", where, i+1, scores[i], p, scores[max(i-1, 0)], probs[max(i-1, 0)])
		}
	}
	if len(probs) > 0 && (sum < 1-tol || sum > 1+tol) {
		t.Errorf("%s: probabilities sum to %v", where, sum)
	}
}

// checkDate: a last_edit_date is null or RFC 3339, one of the corpus's dates.
func checkDate(t *testing.T, where string, v any) time.Time {
	t.Helper()
	if v == nil {
		t.Errorf("%s: last_edit_date null, but every passage is dated", where)
		return time.Time{}
	}
	d, err := time.Parse(time.RFC3339, v.(string))
	if err != nil {
		t.Errorf("%s: last_edit_date %v: %v", where, v, err)
	}
	return d
}
