package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// svgBars reads the bars of an SVG page that svgplot drew: each <rect> with a <title> of
// "series: value", by series name, in document order.
func svgBars(t *testing.T, svg []byte) map[string][]float64 {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	bars := map[string][]float64{}
	inRect := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "rect" {
				inRect = true
			}
		case xml.EndElement:
			if e.Name.Local == "rect" {
				inRect = false
			}
		case xml.CharData:
			if !inRect {
				continue
			}
			name, val, ok := strings.Cut(string(e), ": ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("bar %q: %v", e, err)
			}
			bars[name] = append(bars[name], v)
		}
	}
	return bars
}

// kairos eval --plot draws this run beside the runs of --plot-with, each bar the figure the
// run's --json reports, and refuses what it cannot draw before it evaluates anything.
func TestEvalPlot(t *testing.T) {
	queries := coreShared(t, "data/beir-scifact/queries.jsonl")
	qrels := coreShared(t, "data/beir-scifact/qrels/train.tsv")
	tmp := t.TempDir()
	var results []string
	for _, n := range []int{400, 800} {
		name := "sf" + strconv.Itoa(n)
		corpusFile := filepath.Join(tmp, name+".jsonl")
		writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, n)
		dir := filepath.Join(tmp, name)
		if _, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", dir); err != nil {
			t.Fatal(err)
		}
		out, _, err := runCLI(t, "eval", "--index", dir, "--queries", queries, "--qrels", qrels, "--json", "--depth", "100")
		if err != nil {
			t.Fatal(err)
		}
		res := filepath.Join(tmp, name+".json")
		if err := os.WriteFile(res, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}

	plot := filepath.Join(tmp, "eval.svg")
	if _, _, err := runCLI(t, "eval", "--index", filepath.Join(tmp, "sf800"), "--queries", queries, "--qrels", qrels,
		"--depth", "100", "--plot", plot, "--plot-with", results[0]); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	bars := svgBars(t, svg)
	for i, name := range []string{"bm25 (sf400)", "bm25 (sf800)"} {
		var want map[string]any
		b, _ := os.ReadFile(results[i])
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got := bars[name]
		// recall at 1, 5, 20, 100; nDCG and MRR at 10; then latency, which differs run to run.
		keys := []string{"recall_at_1", "recall_at_5", "recall_at_20", "recall_at_100", "ndcg_at_10", "mrr_at_10"}
		if len(got) != len(keys)+2 {
			t.Fatalf("%s: %d bars %v, want %d", name, len(got), got, len(keys)+2)
		}
		for j, k := range keys {
			// The bar's title carries 4 significant digits.
			wk, _ := want[k].(float64)
			if w, _ := strconv.ParseFloat(strconv.FormatFloat(wk, 'g', 4, 64), 64); got[j] != w {
				t.Errorf("%s %s: bar %g, eval --json %g", name, k, got[j], want[k])
			}
		}
	}
	otherK := filepath.Join(tmp, "k20.json")
	out, _, err := runCLI(t, "eval", "--index", filepath.Join(tmp, "sf400"), "--queries", queries, "--qrels", qrels, "--json", "-k", "20")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(otherK, []byte(out), 0o644)
	notEval := filepath.Join(tmp, "stats.json")
	os.WriteFile(notEval, []byte(`{"documents": 3}`), 0o644)
	idx := filepath.Join(tmp, "sf400")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plot-with", results[0]}, "--plot-with draws beside this run in --plot: give --plot FILE.svg"},
		{[]string{"--plot", plot, "--plot-with", otherK}, "k20.json: measured at cutoff 20, this run at 10: run with -k 20"},
		{[]string{"--plot", plot, "--plot-with", notEval}, "stats.json: not a kairos eval --json result"},
		{[]string{"--plot", plot, "--plot-with", results[0] + "," + filepath.Join(tmp, "missing.json")}, "missing.json: no such file"},
	} {
		_, _, err := runCLI(t, append([]string{"eval", "--index", idx, "--queries", queries, "--qrels", qrels}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("eval %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// A refused --plot-with leaves the earlier picture as it was.
	if b, _ := os.ReadFile(plot); string(b) != string(svg) {
		t.Error("a refused eval rewrote the plot")
	}
}

// FuzzEvalResult: reading an earlier run's --json never panics, and what it accepts writes
// back as JSON that reads as the same evaluation.
func FuzzEvalResult(f *testing.F) {
	f.Add([]byte(`{"index":"i","queries":"q","mode":"bm25","rerank":"","judged_queries":3,"cutoff":10,"recall_at_1":0.1,"recall_at_5":0.2,"recall_at_20":0.3,"recall_at_100":0.4,"latency_p50_ms":1,"latency_p99_ms":2,"ndcg_at_10":0.5,"mrr_at_10":0.6}`))
	f.Add([]byte(`{"judged_queries":1,"cutoff":5,"ndcg_at_5":1,"mrr_at_5":0}`))
	f.Add([]byte(`{"judged_queries":1,"cutoff":5,"ndcg_at_10":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r evalResult
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back evalResult
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if back != r {
			t.Fatalf("%+v wrote %s, read back %+v", r, out, back)
		}
	})
}
