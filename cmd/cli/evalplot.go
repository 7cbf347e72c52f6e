package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/svgplot"
	"github.com/kairos-rag/kairos/search"
)

// maxEvalResultBytes bounds an earlier run's --json file: an evaluation is one small object,
// so a larger file is a wrong path (a run file, a corpus), refused before it is read whole.
const maxEvalResultBytes = 1 << 20

// UnmarshalJSON reads what MarshalJSON writes: the evaluation's fields, the metrics' and nDCG
// and MRR named by the cut-off ("ndcg_at_10"). It fails closed: a file without a positive
// cut-off, without judged queries or without nDCG at its cut-off is not an evaluation.
func (r *evalResult) UnmarshalJSON(b []byte) error {
	type plain struct {
		Index   string  `json:"index"`
		Queries string  `json:"queries"`
		Mode    string  `json:"mode"`
		Rerank  string  `json:"rerank"`
		Judged  int     `json:"judged_queries"`
		K       int     `json:"cutoff"`
		R1      float64 `json:"recall_at_1"`
		R5      float64 `json:"recall_at_5"`
		R20     float64 `json:"recall_at_20"`
		R100    float64 `json:"recall_at_100"`
		P50ms   float64 `json:"latency_p50_ms"`
		P99ms   float64 `json:"latency_p99_ms"`
	}
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.K <= 0 || p.Judged <= 0 {
		return fmt.Errorf("not a kairos eval --json result: want a positive cutoff and judged_queries")
	}
	var atK map[string]json.RawMessage
	if err := json.Unmarshal(b, &atK); err != nil {
		return err
	}
	k := strconv.Itoa(p.K)
	var ndcg, mrr float64
	for _, f := range []struct {
		name string
		v    *float64
	}{{"ndcg_at_" + k, &ndcg}, {"mrr_at_" + k, &mrr}} {
		raw, ok := atK[f.name]
		if !ok {
			return fmt.Errorf("not a kairos eval --json result: no %s for its cutoff %d", f.name, p.K)
		}
		if err := json.Unmarshal(raw, f.v); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	for _, v := range []float64{p.R1, p.R5, p.R20, p.R100, ndcg, mrr} {
		if v < 0 || v > 1 {
			return fmt.Errorf("not a kairos eval --json result: a metric of %g is outside 0..1", v)
		}
	}
	*r = evalResult{Index: p.Index, Queries: p.Queries, Mode: p.Mode, Rerank: p.Rerank, MetricsResult: search.MetricsResult{
		Queries: p.Judged, K: p.K, NDCG: ndcg, MRR: mrr, R1: p.R1, R5: p.R5, R20: p.R20, R100: p.R100,
		P50ms: p.P50ms, P99ms: p.P99ms,
	}}
	return nil
}

// readEvalResults reads the earlier runs of --plot-with (the --json output of kairos eval),
// each refused with its file's name when it is not one or was measured at another cut-off
// than this run's, whose nDCG it would stand beside.
func readEvalResults(flags []string, k int) ([]evalResult, error) {
	var out []evalResult
	var paths []string
	for _, f := range flags {
		paths = append(paths, strings.Split(f, ",")...)
	}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--plot-with: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxEvalResultBytes+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--plot-with: %s: %w", path, err)
		}
		if len(b) > maxEvalResultBytes {
			return nil, fmt.Errorf("--plot-with: %s: over %d bytes: not the output of kairos eval --json", path, maxEvalResultBytes)
		}
		var r evalResult
		if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil {
			return nil, fmt.Errorf("--plot-with: %s: %w (write it with kairos eval --json > FILE)", path, err)
		}
		if r.K != k {
			return nil, fmt.Errorf("--plot-with: %s: measured at cutoff %d, this run at %d: run with -k %d", path, r.K, k, r.K)
		}
		out = append(out, r)
	}
	return out, nil
}

// runLabel names a run in the legend: what retrieved (mode and reranking) and from which
// index, the two things runs side by side differ in.
func runLabel(r evalResult) string {
	s := r.Mode
	if r.Rerank != "" && r.Rerank != "none" {
		s += "+" + r.Rerank
	}
	if r.Index != "" {
		s += " (" + filepath.Base(strings.TrimRight(r.Index, "/")) + ")"
	}
	return s
}

// writeEvalPlot draws runs side by side (recall at each depth, nDCG and MRR at the cut-off,
// latency) as an SVG file, written atomically (- is standard output).
func writeEvalPlot(path string, runs []evalResult, stdout io.Writer) error {
	k := strconv.Itoa(runs[0].K)
	recall := svgplot.BarChart{Title: "Recall at depth k", YLabel: "recall", Groups: []string{"R@1", "R@5", "R@20", "R@100"}}
	rank := svgplot.BarChart{Title: "Ranking quality at cutoff " + k, YLabel: "mean over judged queries", Groups: []string{"nDCG@" + k, "MRR@" + k}}
	lat := svgplot.BarChart{Title: "Latency per query", YLabel: "milliseconds", Groups: []string{"p50", "p99"}}
	queries := ""
	for _, r := range runs {
		name := runLabel(r)
		recall.Series = append(recall.Series, svgplot.Series{Name: name, Y: []float64{r.R1, r.R5, r.R20, r.R100}})
		rank.Series = append(rank.Series, svgplot.Series{Name: name, Y: []float64{r.NDCG, r.MRR}})
		lat.Series = append(lat.Series, svgplot.Series{Name: name, Y: []float64{r.P50ms, r.P99ms}})
		if queries == "" {
			queries = filepath.Base(r.Queries)
		}
	}
	title := "kairos eval"
	if queries != "" {
		title += ": " + queries
	}
	return atomicfile.Write(path, atomicfile.Options{Stdout: stdout}, func(w io.Writer) error {
		return svgplot.Page(w, title, recall, rank, lat)
	})
}
