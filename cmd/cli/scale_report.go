package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// writeScaleRows prints one table row per collection, or one JSON object per line.
func writeScaleRows(w io.Writer, rows []scaleRow, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		return nil
	}
	r0 := rows[0]
	fmt.Fprintf(w, "corpus %s; %d queries (SciFact claims and SQuAD questions), k %d, one thread; build: kairos index child process, lexical engine %s\n",
		r0.Corpus, r0.BM25.Queries, r0.K, r0.Lexical)
	head := []string{"passages", "build s", "passages/s", "peak RSS", "index", "bm25 p50/p99 ms"}
	if r0.Dense {
		head = append(head, "dense p50/p99 ms", "hybrid p50/p99 ms")
	}
	head = append(head, "xapian p50/p99 ms", "xapian build s", "load")
	var lines [][]string
	for _, r := range rows {
		l := []string{
			fmt.Sprint(r.Passages), fmt.Sprintf("%.1f", r.BuildS), fmt.Sprintf("%.0f", r.BuildPerS),
			humanBytes(r.BuildPeakRSS), humanBytes(r.IndexBytes), pair(r.BM25.P50MS, r.BM25.P99MS),
		}
		if r0.Dense {
			l = append(l, pairOf(r.DenseLatency), pairOf(r.HybridLatency))
		}
		if x := r.Xapian; x != nil {
			l = append(l, pair(x.P50MS, x.P99MS), fmt.Sprintf("%.1f", x.BuildS))
		} else {
			l = append(l, "-", "-")
		}
		lines = append(lines, append(l, fmt.Sprintf("%.2f", r.Load1)))
	}
	widths := make([]int, len(head))
	for _, l := range append([][]string{head}, lines...) {
		for i, c := range l {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, l := range append([][]string{head}, lines...) {
		cells := make([]string, len(l))
		for i, c := range l {
			cells[i] = fmt.Sprintf("%*s", widths[i], c)
		}
		if _, err := fmt.Fprintln(w, strings.Join(cells, "  ")); err != nil {
			return err
		}
	}
	if r0.XapianNotRun != "" {
		fmt.Fprintf(w, "xapian anchor not run: %s\n", r0.XapianNotRun)
	}
	return nil
}

func pair(a, b float64) string { return fmt.Sprintf("%.2f / %.2f", a, b) }

func pairOf(l *latency) string {
	if l == nil {
		return "-"
	}
	return pair(l.P50MS, l.P99MS)
}

// humanBytes prints a byte count in MB or GB (decimal, as the table).
func humanBytes(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}
