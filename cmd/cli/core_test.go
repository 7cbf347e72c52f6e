package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func coreShared(t *testing.T, rel string) string {
	t.Helper()
	root := os.Getenv("KAIROS_SHARED")
	if root == "" {
		root = "../../../shared"
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared data missing: %v", err)
	}
	return p
}

// runCLI runs kairos with args and returns stdout and stderr.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func TestIndexSearchStatsEval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	dump := coreShared(t, "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	out, _, err := runCLI(t, "index", "--input", dump, "--index", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"documents   106\n", "skipped     1 namespace\n", "skipped     99 redirect\n", "passages/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("index summary lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runCLI(t, "search", "--index", dir, "-k", "3", "--json", "Who composed An American in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Query string
		Hits  []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	if len(res.Hits) != 3 || res.Hits[0]["title"] != "An American in Paris" {
		t.Fatalf("hits: %v", res.Hits)
	}
	for _, key := range []string{"passage_id", "doc_id", "title", "text", "url", "date", "score", "rank"} {
		if _, ok := res.Hits[0][key]; !ok {
			t.Errorf("hit lacks %q", key)
		}
	}

	out, _, err = runCLI(t, "search", "--index", dir, "-k", "2", "Who composed An American in Paris?")
	if err != nil || !strings.Contains(out, "RANK") || !strings.Contains(out, "An American in Paris") {
		t.Fatalf("table output: %v\n%s", err, out)
	}

	queries := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(queries, []byte(`{"_id": "q1", "text": "Gershwin jazz symphonic poem", "gold_doc_ids": ["309"]}
{"id": 2, "text": "albedo of fresh snow", "gold_doc_ids": ["39"]}
`), 0o644)
	run := filepath.Join(t.TempDir(), "run.jsonl")
	if _, _, err := runCLI(t, "search", "--index", dir, "--batch", queries, "--out", run, "-k", "5"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(run)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("run has %d lines", len(lines))
	}
	var line struct {
		QID  string           `json:"qid"`
		Hits []map[string]any `json:"hits"`
	}
	json.Unmarshal([]byte(lines[1]), &line)
	if line.QID != "2" || len(line.Hits) != 5 || line.Hits[0]["doc_id"] != "39" {
		t.Fatalf("run line 2: %+v", line)
	}

	out, _, err = runCLI(t, "stats", "--index", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	json.Unmarshal([]byte(out), &st)
	if st["documents"] != 106.0 || st["passages"] == nil {
		t.Fatalf("stats --json: %s", out)
	}

	out, _, err = runCLI(t, "eval", "--index", dir, "--queries", queries, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	json.Unmarshal([]byte(out), &ev)
	if ev["judged_queries"] != 2.0 || ev["recall_at_5"] != 1.0 {
		t.Fatalf("eval: %s", out)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"index", "--index", "x"}, "need --input and --index"},
		{[]string{"index", "--index", "x", "--input", "a.jsonl", "--workers", "-1"}, "--workers -1: want 0"},
		{[]string{"passages", "--input", "a.jsonl", "--workers", "-2"}, "--workers -2: want 0"},
		{[]string{"passages", "--input", "a.jsonl", "--max-record-bytes", "-2"}, "--max-record-bytes -2: want 0"},
		{[]string{"search", "q"}, "need --index"},
		// Request errors: one line naming the flag, from request.Parse.
		{[]string{"search", "--index", "x", "--mode", "fuzzy", "q"}, `search: --mode: "fuzzy": want bm25, dense or hybrid`},
		{[]string{"search", "--index", "x", "-k", "0", "q"}, `search: -k: 0: want a positive number of hits`},
		{[]string{"search", "--index", "x", "-k", "-3", "--batch", "q.jsonl"}, `search: -k: -3: want a positive number of hits`},
		{[]string{"search", "--index", "x", "--time", "1998..1990", "q"}, `search: --time: invalid time spec "1998..1990"`},
		{[]string{"search", "--index", "x", "--rerank", "time,cross", "q"}, `search: --rerank: rerank "time,cross": the cross-encoder must run first`},
		{[]string{"search", "--index", "x", "--now", "2020-13-01", "q"}, `search: --now: "2020-13-01" is not a date`},
		{[]string{"search", "--index", "x", "--recent-half-life", "-1", "q"}, `search: --recent-half-life: -1: want a number of years in (0, 1000]`},
		{[]string{"search", "--index", "x", "--date-from", "2021-01-01", "--date-to", "2020-01-01", "q"}, `search: --date-to: 2020-01-01 is before date_from 2021-01-01`},
		{[]string{"search", "--index", "x", "--source", "", "q"}, `search: --source: empty string`},
		{[]string{"search", "--index", "x", "--fusion", "sum", "q"}, `search: --fusion: "sum": want rrf or convex`},
		{[]string{"eval", "--index", "x", "--queries", "q.jsonl", "--depth", "0"}, `eval: --depth: 0: want a positive number of hits`},
		{[]string{"serve", "--index", "x", "--recent-half-life", "0"}, `--recent-half-life 0: want a number of years in (0, 1000]`},
		{[]string{"eval", "--index", "x"}, "need --index and --queries"},
	}
	for _, tc := range tests {
		_, _, err := runCLI(t, tc.args...)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != 2 {
			t.Errorf("%v: err %v, want usage error containing %q", tc.args, err, tc.want)
		}
	}
	_, _, err := runCLI(t, "search", "--index", t.TempDir(), "q")
	if err == nil || !strings.Contains(err.Error(), "no index") || ExitCode(err) != 1 {
		t.Errorf("search of an empty dir: %v", err)
	}
}
