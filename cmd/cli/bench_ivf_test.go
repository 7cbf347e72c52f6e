package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// bench ivf reads the vectors bench ann dumped (the topic fixture: passages of bench corpus
// --topics embedded with its topic model) and measures the inverted file against the dump's
// exact neighbours: more lists probed find more of them, and a filter keeping a quarter of
// the passages keeps at least 0.9 of the unfiltered recall, against the exact neighbours among
// the passages it keeps.
func TestBenchIVF(t *testing.T) {
	dir := t.TempDir()
	model, data := filepath.Join(dir, "topics"), filepath.Join(dir, "dump")
	if out, _, err := runCLI(t, "bench", "corpus", "--passages", "100", "--out", filepath.Join(dir, "c.jsonl"), "--topics", "40",
		"--topic-model", model, "--topic-dim", "32", "--shared", coreShared(t, ".")); err != nil {
		t.Fatalf("bench corpus: %v\n%s", err, out)
	}
	if _, errOut, err := runCLI(t, "bench", "ann", "--n", "8000", "--model", model, "--topics", "40", "--queries", "100",
		"--ef", "16", "--efc", "40", "--repeat", "1", "--dump", data, "--shared", coreShared(t, ".")); err != nil {
		t.Fatalf("bench ann --dump: %v\n%s", err, errOut)
	}
	// 256 lists; the filter keeps 2,000 passages, enough for the search to probe twice as
	// many lists rather than score every one it keeps.
	kept := filepath.Join(dir, "ivf")
	out, errOut, err := runCLI(t, "bench", "ivf", "--data", data, "--index", kept, "--probe", "1,16,64", "--filter-share", "0.25", "--repeat", "1", "--json")
	if err != nil {
		t.Fatalf("bench ivf: %v\n%s", err, errOut)
	}
	rows := benchIVFRows(t, out)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want one per probe unfiltered and filtered:\n%s", len(rows), out)
	}
	one, mid, many := rows[0], rows[1], rows[2]
	if one.N != 8000 || one.Lists != 256 || one.QPS <= 0 {
		t.Errorf("row %+v: want 8000 vectors in 256 lists, a rate", one)
	}
	if many.Recall < 0.9 || one.Recall >= mid.Recall || mid.Recall > many.Recall {
		t.Errorf("recall@10 %.3f, %.3f, %.3f probing 1, 16, 64 lists: want more lists to find more, at least 0.9", one.Recall, mid.Recall, many.Recall)
	}
	for i, f := range rows[3:] {
		if f.FilterShare != 0.25 || f.Probe != rows[i].Probe || f.Recall < 0.9*rows[i].Recall {
			t.Errorf("filtered row %+v: want the share 0.25 and at least 0.9 of the unfiltered recall %.3f", f, rows[i].Recall)
		}
	}
	// --load measures the kept index again without building it: the same recall at each probe.
	out, errOut, err = runCLI(t, "bench", "ivf", "--data", data, "--load", kept, "--probe", "1,16,64", "--repeat", "1", "--json")
	if err != nil {
		t.Fatalf("bench ivf --load: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "loaded 8000 vectors") {
		t.Errorf("bench ivf --load said %q; want the vectors it loaded", errOut)
	}
	for i, l := range benchIVFRows(t, out) {
		if l.Recall != rows[i].Recall || l.Lists != 256 || l.Build != 0 || rows[i].Build <= 0 {
			t.Errorf("loaded row %+v, built %+v: want the same recall and lists, no build", l, rows[i])
		}
	}
}

// Its refusals name the flag that fixes them.
func TestBenchIVFRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--data"},
		{[]string{"--data", t.TempDir(), "--probe", "0"}, "--probe"},
		{[]string{"--data", t.TempDir(), "--filter-share", "1.5"}, "--filter-share"},
		{[]string{"--data", t.TempDir()}, "meta.json"},
		{[]string{"--data", t.TempDir(), "--load", t.TempDir(), "--lists", "16"}, "--lists"},
		{[]string{"--from-index", t.TempDir(), "--queries", "q", "--model", "m", "--load", t.TempDir()}, "--load"},
	} {
		_, errOut, err := runCLI(t, append([]string{"bench", "ivf"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error()+errOut, tc.want) {
			t.Errorf("bench ivf %q: %v %s; want an error naming %s", tc.args, err, errOut, tc.want)
		}
	}
}

// bench ivf --from-index measures the inverted file of a built index, on queries embedded by
// its model, against the exact neighbours among the index's own vectors: probing every list
// and rescoring every vector finds all of them, filtered or not, and one list finds fewer.
// The index is built as a user builds it (kairos index --vector-index ivf).
func TestBenchIVFFromIndex(t *testing.T) {
	dir := t.TempDir()
	model, corpus, queries, idx := filepath.Join(dir, "topics"), filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "q.jsonl"), filepath.Join(dir, "ix")
	for _, args := range [][]string{
		{"bench", "corpus", "--passages", "3000", "--out", corpus, "--topics", "40", "--topic-model", model, "--topic-dim", "32", "--shared", coreShared(t, ".")},
		{"bench", "corpus", "--passages", "60", "--seed", "2", "--out", queries, "--topics", "40", "--shared", coreShared(t, ".")},
		{"index", "--quiet", "--input", corpus, "--model", model, "--vector-index", "ivf", "--index", idx},
	} {
		if out, errOut, err := runCLI(t, args...); err != nil {
			t.Fatalf("%s: %v\n%s%s", strings.Join(args[:2], " "), err, out, errOut)
		}
	}
	out, errOut, err := runCLI(t, "bench", "ivf", "--from-index", idx, "--queries", queries, "--model", model,
		"--probe", "1,100000", "--rescore", "0,100000", "--filter-share", "0.25", "--repeat", "1", "--json")
	if err != nil {
		t.Fatalf("bench ivf --from-index: %v\n%s", err, errOut)
	}
	rows := benchIVFRows(t, out)
	if len(rows) != 8 || rows[0].N != 3000 {
		t.Fatalf("rows %+v: want two probes by two rescores, unfiltered and filtered, 3,000 vectors", rows)
	}
	for i, r := range rows {
		if want := []int{0, 100000}[i%2]; r.Rescore != want {
			t.Errorf("row %d: rescore %d, want %d (the sweep is probe by rescore)", i, r.Rescore, want)
		}
	}
	if rows[1].Recall >= 1 || rows[3].Recall != 1 {
		t.Errorf("recall@10 %.4f probing one list, %.4f probing all and rescoring all: want fewer, then all", rows[1].Recall, rows[3].Recall)
	}
	// A filter keeping a quarter probes more lists than asked (enough to hold its candidates).
	if rows[7].FilterShare != 0.25 || rows[7].Recall != 1 {
		t.Errorf("filtered, probing all and rescoring all: %+v, want all the exact neighbours among the passages kept", rows[7])
	}
	if _, _, err := runCLI(t, "bench", "ivf", "--from-index", idx, "--model", model); err == nil || !strings.Contains(err.Error(), "--queries") {
		t.Errorf("--from-index without --queries: %v, want a refusal naming --queries", err)
	}
}

// benchIVFRow is a line of kairos bench ivf --json.
type benchIVFRow struct {
	Probe       int     `json:"probe"`
	Rescore     int     `json:"rescore"`
	Recall      float64 `json:"recall_at_10"`
	QPS         float64 `json:"qps"`
	Build       float64 `json:"build_seconds"`
	N           int     `json:"n"`
	Lists       int     `json:"lists"`
	FilterShare float64 `json:"filter_share"`
}

// benchIVFRows decodes kairos bench ivf --json's output.
func benchIVFRows(t *testing.T, out string) []benchIVFRow {
	t.Helper()
	var rows []benchIVFRow
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r benchIVFRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		rows = append(rows, r)
	}
	return rows
}
