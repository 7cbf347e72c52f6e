package scalebench

import (
	"fmt"
	"io"
	"strings"

	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
	"github.com/kairos-rag/kairos/internal/svgplot"
)

// ProgressPoint is one progress line of a build: the passages indexed S seconds after the
// child started.
type ProgressPoint struct {
	S        float64 `json:"s"`
	Passages int     `json:"passages"`
}

// WritePlot draws rows (one per collection size) as an SVG page: each build's indexing rate
// over time, where a stall shows as a dip (the 30-second rate the table reports is its lowest
// stretch), the query latency of Kairos beside each anchor, p50 and p99, size by size, and,
// for each size with dense engines, their recall@10 against queries per second.
func WritePlot(w io.Writer, rows []Row) error {
	rate := svgplot.LineChart{Title: "Indexing rate over the build", XLabel: "seconds since the build started",
		YLabel: "passages per second"}
	for _, r := range rows {
		if s := rateSeries(r); len(s.X) > 0 {
			rate.Series = append(rate.Series, s)
		}
	}
	lat := svgplot.BarChart{Title: fmt.Sprintf("BM25 query latency, k %d, one thread", kOf(rows)), YLabel: "milliseconds"}
	p50 := svgplot.Series{Name: "p50"}
	p99 := svgplot.Series{Name: "p99"}
	for _, r := range rows {
		add := func(engine string, a, b float64) {
			lat.Groups = append(lat.Groups, sizeLabel(r.Passages)+" "+engine)
			p50.Y, p99.Y = append(p50.Y, a), append(p99.Y, b)
		}
		add("kairos", r.BM25.P50MS, r.BM25.P99MS)
		if x := r.Xapian; x != nil {
			add("xapian", x.P50MS, x.P99MS)
		}
		if l := r.Lucene; l != nil {
			add("lucene", l.P50MS, l.P99MS)
			if l.MergedSegments > 0 {
				add("lucene merged", l.MergedP50MS, l.MergedP99MS)
			}
		}
	}
	lat.Series = []svgplot.Series{p50, p99}
	title := "kairos bench scale"
	if len(rows) > 0 {
		title += ": " + rows[0].Corpus
	}
	charts := []svgplot.Chart{rate, lat}
	for _, r := range rows {
		if len(r.DenseEngines) > 0 {
			rep := annbench.Report{RunInfo: r.DenseEngines[0].RunInfo, Results: r.DenseEngines}
			charts = append(charts, annbench.RecallChart(&rep, sizeLabel(r.Passages)+" passages:"))
		}
	}
	return svgplot.Page(w, title, charts...)
}

// rateSeries is a build's rate between consecutive progress lines, the first from the start
// of the build (0 passages at 0 s), so that a short build of two lines still draws a line,
// from 0 s.
func rateSeries(r Row) svgplot.Series {
	s := svgplot.Series{Name: sizeLabel(r.Passages) + " passages"}
	prev := ProgressPoint{}
	for _, p := range r.BuildProgress {
		if dt := p.S - prev.S; dt > 0 {
			rate := float64(p.Passages-prev.Passages) / dt
			if len(s.X) == 0 { // the first interval's rate holds from 0 s: the axis starts there
				s.X, s.Y = append(s.X, 0), append(s.Y, rate)
			}
			s.X = append(s.X, p.S)
			s.Y = append(s.Y, rate)
			prev = p
		}
	}
	return s
}

func kOf(rows []Row) int {
	if len(rows) == 0 {
		return 0
	}
	return rows[0].K
}

// sizeLabel writes a collection size shortly: 1000000 as 1M, 300000 as 300k.
func sizeLabel(n int) string {
	switch {
	case n >= 1e6 && n%1e5 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1e3 && n%100 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}
