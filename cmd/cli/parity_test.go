package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/server"
)

// parityIndex builds a BM25 index of three real sources: the first 300 SciFact abstracts
// (source scifact, undated), the paragraphs of the first 40 TimeQA train pages (timeqa, with
// years in the text) and the Wikimedia Enterprise test articles (enterprise, dated 2018 and
// 2023).
func parityIndex(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	type doc struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	sf, err := os.ReadFile(coreShared(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(sf), "\n", 301)
	scifact := filepath.Join(dir, "scifact.jsonl")
	if err := os.WriteFile(scifact, []byte(strings.Join(lines[:300], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tq, tqq := filepath.Join(dir, "timeqa-all.jsonl"), filepath.Join(dir, "timeqa-queries.jsonl")
	if err := cmdDataset(context.Background(), []string{"timeqa", "--input", coreShared(t, "data/timeqa/human_annotated_train.json"),
		"--corpus", tq, "--queries", tqq}, IO{Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	pages := map[string]bool{}
	for _, d := range readJSONL[timeQADoc](t, tq) {
		page, _, _ := strings.Cut(d.ID, "/")
		if !pages[page] && len(pages) == 40 {
			continue
		}
		pages[page] = true
		enc.Encode(doc(d))
	}
	timeqa := filepath.Join(dir, "timeqa.jsonl")
	if err := os.WriteFile(timeqa, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "idx")
	in := []indexer.InputSpec{
		{Path: scifact, Options: corpus.Options{Source: "scifact"}},
		{Path: timeqa, Options: corpus.Options{Source: "timeqa"}},
		{Path: coreShared(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson"), Options: corpus.Options{Source: "enterprise"}},
	}
	// The Enterprise sample mixes de, en and ru: analysed as English, as the rest.
	buildIndex(t, idx, indexer.Options{Inputs: in, Build: indexer.BuildOptions{Language: "en"}})
	return idx
}

// parityServe runs kairos serve's function on idx and returns its base URL.
func parityServe(t *testing.T, idx string) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	opts := server.Options{Logger: log, Index: newLiveIndex(indexer.Location{Dir: idx}, "", retrievalOptions{Logger: log})}
	return startServe(t, opts)
}

// parityHit is what must agree: the passage, its rank and its exact score.
type parityHit struct {
	ID    string  `json:"passage_id"`
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

func postSearch(t *testing.T, base string, body any) (status int, results []struct {
	Time struct{ Kind string }
	Hits []parityHit
}, errMsg string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/v1/search", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Time struct{ Kind string }
			Hits []parityHit
		}
		Error string
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out.Results, out.Error
}

func sameHits(a, b []parityHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The CLI (single search and --batch lines) and POST /v1/search give identical hits, exact
// scores included, for the same request across time needs, rerank stages, per-query now and
// half-life, filters and modes; and refuse the same bad requests with the same reason.
func TestCLIAndHTTPParity(t *testing.T) {
	idx := parityIndex(t)
	base := parityServe(t, idx)
	const owner = "Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?"
	tests := []struct {
		name string
		args []string       // CLI flags before the query
		body map[string]any // the same request for HTTP, without "text"
		text string
	}{
		{"plain", nil, map[string]any{}, "vitamin D and bone density"},
		{"mode bm25 k 3", []string{"--mode", "bm25", "-k", "3"}, map[string]any{"mode": "bm25", "k": 3}, "vitamin D and bone density"},
		// The case: the CLI read time none, HTTP auto (2005).
		{"rerank time implies auto", []string{"--rerank", "time"}, map[string]any{"rerank": "time"}, "vitamin D in 2005"},
		{"rerank time on TimeQA", []string{"--rerank", "time", "--explain"}, map[string]any{"rerank": "time", "explain": true}, owner},
		{"explicit time none", []string{"--rerank", "time", "--time", "none"}, map[string]any{"rerank": "time", "time": "none"}, owner},
		{"explicit range", []string{"--rerank", "time", "--time", "1900..1950", "--candidates", "20"}, map[string]any{"rerank": []string{"time"}, "time": "1900..1950", "candidates": 20}, owner},
		{"wikichat", []string{"--rerank", "wikichat"}, map[string]any{"rerank": "wikichat"}, owner},
		{"recent with now and half-life", []string{"--rerank", "time", "--time", "recent", "--now", "2019-01-01", "--recent-half-life", "0.5"},
			map[string]any{"rerank": "time", "time": "recent", "now": "2019-01-01", "recent_half_life_years": 0.5}, "squirrel species"},
		{"source filter", []string{"--source", "timeqa", "--per-doc", "1"}, map[string]any{"filters": map[string]any{"source": "timeqa"}, "per_doc": 1}, "house owner"},
		{"date filter", []string{"--date-from", "2023-07-01"}, map[string]any{"filters": map[string]any{"date_from": "2023-07-01"}}, "squirrel"},
		// A bound at Go's zero instant is a bound on both fronts (request.DateBounds): the CLI
		// had read --date-from 0001-01-01 as none, and kept the undated passages.
		{"date_from at the zero instant", []string{"--date-from", "0001-01-01"}, map[string]any{"filters": map[string]any{"date_from": "0001-01-01"}}, "squirrel species"},
		{"date_to filter", []string{"--date-to", "2020-12-31", "--source", "enterprise"}, map[string]any{"filters": map[string]any{"date_to": "2020-12-31", "source": []string{"enterprise"}}}, "squirrel"},
	}
	var batch bytes.Buffer
	var queries []map[string]any
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"search", "--index", idx, "--json"}, tc.args...), tc.text)
			out, _, err := runCLI(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var cli struct {
				Time string
				Hits []parityHit
			}
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatal(err)
			}
			body := map[string]any{"text": tc.text}
			for k, v := range tc.body {
				body[k] = v
			}
			status, res, msg := postSearch(t, base, body)
			if status != 200 {
				t.Fatalf("HTTP %d: %s", status, msg)
			}
			if len(cli.Hits) == 0 {
				t.Fatal("no hits: the case tests nothing")
			}
			if !sameHits(cli.Hits, res[0].Hits) {
				t.Errorf("CLI hits %v\nHTTP hits %v", cli.Hits, res[0].Hits)
			}
			if tc.name == "rerank time implies auto" && cli.Time != "year=2005" {
				t.Errorf("CLI resolved time %q, want year=2005", cli.Time)
			}
			line := map[string]any{"id": fmt.Sprint(i)}
			for k, v := range body {
				line[k] = v
			}
			b, _ := json.Marshal(line)
			batch.Write(append(b, '\n'))
			queries = append(queries, body)
		})
	}

	// A batch file whose lines carry the same fields gives the same hits as one HTTP batch.
	in, out := filepath.Join(t.TempDir(), "q.jsonl"), filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(in, batch.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// -k 10 on the command line: the lines that name no k get 10, as HTTP gives.
	if _, _, err := runCLI(t, "search", "--index", idx, "-k", "10", "--batch", in, "--out", out); err != nil {
		t.Fatal(err)
	}
	run := readJSONL[struct {
		QID  string
		Hits []parityHit
	}](t, out)
	status, res, msg := postSearch(t, base, map[string]any{"queries": queries})
	if status != 200 || len(res) != len(tests) || len(run) != len(tests) {
		t.Fatalf("HTTP %d %s: %d results, %d run lines, want %d", status, msg, len(res), len(run), len(tests))
	}
	for i := range tests {
		if !sameHits(run[i].Hits, res[i].Hits) {
			t.Errorf("batch line %d (%s): CLI %v\nHTTP %v", i, tests[i].name, run[i].Hits, res[i].Hits)
		}
	}

	// The same bad request is refused by both with the same reason.
	bad := []struct {
		args []string
		body map[string]any
		msg  string
	}{
		{[]string{"-k", "0"}, map[string]any{"k": 0}, "k: 0: want a positive number of hits"},
		{[]string{"--time", "1998..1990"}, map[string]any{"time": "1998..1990"}, `invalid time spec "1998..1990": range is reversed (1998 > 1990)`},
		{[]string{"--now", "soon"}, map[string]any{"now": "soon"}, `now: "soon" is not a date (want YYYY-MM-DD or RFC 3339)`},
	}
	for _, b := range bad {
		_, _, err := runCLI(t, append(append([]string{"search", "--index", idx}, b.args...), "q")...)
		body := map[string]any{"text": "q"}
		for k, v := range b.body {
			body[k] = v
		}
		status, _, msg := postSearch(t, base, body)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(strings.TrimPrefix(b.msg, "k: "), "now: ")) || status != 400 || !strings.Contains(msg, b.msg) {
			t.Errorf("%v: CLI %v; HTTP %d %s; want both to say %s", b.args, err, status, msg, b.msg)
		}
	}
	// A bad batch line names its file and line before anything runs.
	if err := os.WriteFile(in, []byte(`{"id":"1","text":"x"}`+"\n"+`{"id":"2","text":"y","filters":{"date_to":"2020-31-01"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "search", "--index", idx, "--batch", in, "--out", out)
	if want := in + `: line 2: query 2: filters.date_to: "2020-31-01" is not a date`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad line: %v, want %s", err, want)
	}
	// "source": "" in a batch line is refused as HTTP refuses it, where it had read as no
	// filter and let every source through.
	if err := os.WriteFile(in, []byte(`{"id":"1","text":"x","filters":{"source":""}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "search", "--index", idx, "--batch", in, "--out", out)
	status, _, msg = postSearch(t, base, map[string]any{"text": "x", "filters": map[string]any{"source": ""}})
	if want := in + `: line 1: query 1: filters.source[0]: empty string`; err == nil || !strings.Contains(err.Error(), want) || status != 400 || !strings.Contains(msg, "filters.source[0]: empty string") {
		t.Errorf("empty source: CLI %v; HTTP %d %s; want both to refuse it", err, status, msg)
	}
}
