package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The TREC run of `kairos eval --run` covers every query, ranks from 1 with scores that never
// increase, and scored with the standard nDCG@10 it gives the figure eval itself reports.
func TestEvalRunTREC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	corpusFile := filepath.Join(t.TempDir(), "sf800.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 800)
	if _, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", dir); err != nil {
		t.Fatal(err)
	}
	queries := coreShared(t, "data/beir-scifact/queries.jsonl")
	qrels := coreShared(t, "data/beir-scifact/qrels/train.tsv")
	run := filepath.Join(t.TempDir(), "run.trec")
	out, _, err := runCLI(t, "eval", "--index", dir, "--queries", queries, "--qrels", qrels, "--json", "--depth", "100", "--run", run)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		NDCG   float64 `json:"ndcg_at_10"`
		Judged int     `json:"judged_queries"`
		Cutoff int     `json:"cutoff"`
		Index  string  `json:"index"`
		Mode   string  `json:"mode"`
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || ev.Judged == 0 {
		t.Fatalf("eval output %s: %v", out, err)
	}
	// The evaluation's own fields and the metrics' share one object (the metrics name nDCG
	// by their cut-off in a MarshalJSON of their own).
	if ev.Index != dir || ev.Mode != "bm25" || ev.Cutoff != 10 {
		t.Errorf("eval output %s: index %q mode %q cutoff %d", out, ev.Index, ev.Mode, ev.Cutoff)
	}

	f, err := os.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ranked := map[string][]string{}
	lastScore := map[string]float64{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fld := strings.Fields(sc.Text())
		if len(fld) != 6 || fld[1] != "Q0" || fld[5] != "kairos-bm25" {
			t.Fatalf("line %d %q: not qid Q0 docid rank score kairos-bm25", n, sc.Text())
		}
		qid, doc := fld[0], fld[2]
		rank, err1 := strconv.Atoi(fld[3])
		score, err2 := strconv.ParseFloat(fld[4], 64)
		if err1 != nil || err2 != nil || rank != len(ranked[qid])+1 {
			t.Fatalf("line %d %q: rank %q score %q (want rank %d)", n, sc.Text(), fld[3], fld[4], len(ranked[qid])+1)
		}
		if prev, ok := lastScore[qid]; ok && score > prev {
			t.Fatalf("line %d: score %v above the previous %v", n, score, prev)
		}
		lastScore[qid] = score
		ranked[qid] = append(ranked[qid], doc)
	}
	if want := countLines(t, queries); len(ranked) < want*9/10 {
		t.Errorf("run has %d queries, want (nearly) all %d (a query may match nothing)", len(ranked), want)
	}

	// nDCG@10 over the judged queries, computed here from the run file alone.
	gains := readQrels(t, qrels)
	var sum float64
	var judged int
	for qid, g := range gains {
		judged++ // a query that retrieved nothing scores 0, in eval and here
		var dcg float64
		for i, d := range ranked[qid] {
			if i == 10 {
				break
			}
			dcg += g[d] / math.Log2(float64(i+2))
		}
		ideal := make([]float64, 0, len(g))
		for _, v := range g {
			ideal = append(ideal, v)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(ideal)))
		var idcg float64
		for i, v := range ideal {
			if i == 10 {
				break
			}
			idcg += v / math.Log2(float64(i+2))
		}
		sum += dcg / idcg
	}
	if judged != ev.Judged || math.Abs(sum/float64(judged)-ev.NDCG) > 1e-9 {
		t.Errorf("from the run: %d judged, nDCG@10 %.6f; eval reports %d, %.6f", judged, sum/float64(judged), ev.Judged, ev.NDCG)
	}
}

func writeHead(t *testing.T, src, dst string, n int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(b), "\n", n+1)
	if err := os.WriteFile(dst, []byte(strings.Join(lines[:n], "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(strings.TrimSpace(string(b)), "\n") + 1
}

// readQrels reads a BEIR qrels TSV (header, then query-id, corpus-id, score).
func readQrels(t *testing.T, path string) map[string]map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		g, _ := strconv.ParseFloat(f[2], 64)
		if out[f[0]] == nil {
			out[f[0]] = map[string]float64{}
		}
		out[f[0]][f[1]] = g
	}
	return out
}

// With --run, qrels that judge none of the queries still give the run, with a note and no
// metrics: zeros would read as a measurement.
func TestEvalRunWithoutJudgedQueries(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), in, 50)
	idx := filepath.Join(root, "idx")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", idx); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other.tsv")
	if err := os.WriteFile(other, []byte("query-id\tcorpus-id\tscore\nPLAIN-1\tMED-10\t2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(root, "run.trec")
	out, stderr, err := runCLI(t, "eval", "--index", idx, "--queries", coreShared(t, "data/beir-scifact/queries.jsonl"), "--qrels", other, "--run", run)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "judges none of the") || !strings.Contains(stderr, "writing --run without metrics") {
		t.Errorf("stderr lacks the note:\n%s", stderr)
	}
	if strings.Contains(out, "nDCG") {
		t.Errorf("metrics printed for no judged query:\n%s", out)
	}
	if b, err := os.ReadFile(run); err != nil || !strings.Contains(string(b), " Q0 ") {
		t.Errorf("run file: %v, %.200q", err, b)
	}
}
