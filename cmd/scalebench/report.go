package scalebench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// WriteRows prints one table row per collection, or one JSON object per line.
func WriteRows(w io.Writer, rows []Row, asJSON bool) error {
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
	fmt.Fprintf(w, "corpus %s; %d queries (SciFact claims and SQuAD questions), k %d, one query thread; build: a child process each (peak RSS from its rusage; an anchor's covers its queries too)\n",
		r0.Corpus, r0.BM25.Queries, r0.K)
	head := []string{"passages", "engine", "build s", "passages/s", "slowest 30s", "peak RSS", "index", "bm25 p50/p99 ms"}
	topK := r0.BM25TopK != nil // the exact top k beside the default search's window
	if topK {
		head = append(head, "top-k p50/p99 ms")
	}
	if r0.Dense {
		head = append(head, "dense p50/p99 ms", "hybrid p50/p99 ms")
	}
	head = append(head, "load")
	var lines [][]string
	for _, r := range rows {
		l := []string{
			fmt.Sprint(r.Passages), "kairos " + r.Lexical, fmt.Sprintf("%.1f", r.BuildS), fmt.Sprintf("%.0f", r.BuildPerS),
			slowestText(r.BuildSlowest), humanBytes(r.BuildPeakRSS), humanBytes(r.IndexBytes), pair(r.BM25.P50MS, r.BM25.P99MS),
		}
		if topK {
			l = append(l, pairOf(r.BM25TopK))
		}
		if r0.Dense {
			l = append(l, pairOf(r.DenseLatency), pairOf(r.HybridLatency))
		}
		lines = append(lines, append(l, fmt.Sprintf("%.2f", r.Load1)))
		for _, a := range []struct {
			name string
			r    *AnchorResult
		}{{"xapian", r.Xapian}, {"lucene", r.Lucene}} {
			if a.r == nil {
				continue
			}
			name := strings.TrimSpace(a.name + " " + a.r.Version)
			switch {
			case a.r.Segments > 0 && a.r.Threads > 0:
				name += fmt.Sprintf(" (%d seg, %d threads)", a.r.Segments, a.r.Threads)
			case a.r.Segments > 0:
				name += fmt.Sprintf(" (%d seg)", a.r.Segments)
			}
			l := []string{"", name, fmt.Sprintf("%.1f", a.r.BuildS), fmt.Sprintf("%.0f", a.r.BuildPerS), "-",
				humanBytes(a.r.PeakRSS), humanBytes(a.r.IndexBytes), pair(a.r.P50MS, a.r.P99MS)}
			if topK {
				l = append(l, pair(a.r.P50MS, a.r.P99MS)) // an anchor computes the exact top k
			}
			if r0.Dense {
				l = append(l, "-", "-")
			}
			lines = append(lines, append(l, ""))
			if a.r.MergedSegments == 0 {
				continue
			}
			// The same index merged into one segment, as a served one would be: the build
			// counts the merge too.
			buildS := a.r.BuildS + a.r.MergeS
			l = []string{"", fmt.Sprintf("%s merged (%d seg)", strings.TrimSpace(a.name+" "+a.r.Version), a.r.MergedSegments),
				fmt.Sprintf("%.1f", buildS), fmt.Sprintf("%.0f", float64(a.r.Passages)/buildS), "-", "", "",
				pair(a.r.MergedP50MS, a.r.MergedP99MS)}
			if topK {
				l = append(l, pair(a.r.MergedP50MS, a.r.MergedP99MS))
			}
			if r0.Dense {
				l = append(l, "-", "-")
			}
			lines = append(lines, append(l, ""))
		}
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
			if i == 1 {
				cells[i] = fmt.Sprintf("%-*s", widths[i], c)
			} else {
				cells[i] = fmt.Sprintf("%*s", widths[i], c)
			}
		}
		if _, err := fmt.Fprintln(w, strings.Join(cells, "  ")); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if l := r.Lucene; l != nil && l.MergedSegments > 0 && r.BuildS > 0 && r.BM25.P50MS > 0 {
			// The honest anchor is the merged index built on as many threads as Kairos's build.
			fmt.Fprintf(w, "%d passages: kairos against lucene merged (%d indexing threads): build %.2fx as fast, query p50 %.2fx, p99 %.2fx as fast\n",
				r.Passages, l.Threads, (l.BuildS+l.MergeS)/r.BuildS, l.MergedP50MS/r.BM25.P50MS, l.MergedP99MS/r.BM25.P99MS)
		}
		if r.Incomplete != "" {
			fmt.Fprintf(w, "%d passages incomplete (the figures above were measured before it): %s\n", r.Passages, r.Incomplete)
		}
	}
	for _, r := range rows {
		if len(r.DenseEngines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%d passages, the vector index against the dense anchors on the index's vectors:\n", r.Passages)
		rep := annbench.Report{RunInfo: r.DenseEngines[0].RunInfo, Results: r.DenseEngines}
		if err := annbench.WriteReport(w, &rep, false); err != nil {
			return err
		}
	}
	if r0.XapianNotRun != "" {
		fmt.Fprintf(w, "xapian anchor not run: %s\n", r0.XapianNotRun)
	}
	if r0.LuceneNotRun != "" {
		fmt.Fprintf(w, "lucene anchor not run: %s\n", r0.LuceneNotRun)
	}
	return nil
}

func pair(a, b float64) string { return fmt.Sprintf("%.2f / %.2f", a, b) }

func pairOf(l *Latency) string {
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

// slowestText shows a build's slowest 30-second rate ("-": the build was shorter).
func slowestText(rate float64) string {
	if rate == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", rate)
}
