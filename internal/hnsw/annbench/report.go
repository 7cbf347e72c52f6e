package annbench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/internal/svgplot"
)

// Report is a comparison: every engine setting measured on the same vectors in one run.
type Report struct {
	RunInfo
	Results []Result
}

// RunInfo is what every result of a comparison shares: the data and the conditions.
type RunInfo struct {
	N       int     `json:"n"`
	Dim     int     `json:"dim"`
	Queries int     `json:"queries"`
	K       int     `json:"k"`
	Data    string  `json:"data,omitempty"` // what the vectors are
	Date    string  `json:"date"`           // UTC, YYYY-MM-DD
	Load1   float64 `json:"load1"`          // at the start: the machine is shared
	Threads int     `json:"build_threads"`
	AtQPS   float64 `json:"at_qps"` // the summary's rate
}

// Result is one engine in one served setting; its JSON form is one line of --json, with its
// run's fields.
type Result struct {
	RunInfo
	Engine  string             `json:"engine"`
	Setting string             `json:"setting,omitempty"`
	Version string             `json:"version,omitempty"`
	About   string             `json:"about,omitempty"`
	Params  map[string]float64 `json:"params,omitempty"`
	Knob    string             `json:"knob"`
	// BuildS is the engine's build, timed by the engine from the vectors read to an index a new
	// process can serve (shared by an engine's settings); BuildPeakRSS the build process's peak.
	BuildS       float64 `json:"build_s"`
	BuildPeakRSS int64   `json:"build_peak_rss_bytes"`
	IndexBytes   int64   `json:"index_bytes"`
	LoadS        float64 `json:"load_s"`
	// ServeRSS is the serving process's resident memory after the sweep (mapped files' pages
	// included), ServePeakRSS its peak; ServeCPUs the CPUs it could run on.
	ServeRSS     int64   `json:"serve_rss_bytes"`
	ServePeakRSS int64   `json:"serve_peak_rss_bytes"`
	ServeCPUs    int     `json:"serve_cpus"`
	Points       []Point `json:"points"`
	// Error is what stopped this engine (its other figures are what was measured before).
	Error string `json:"error,omitempty"`
}

// Point is one sweep point: the engine's search settings and what they gave.
type Point struct {
	Point  map[string]float64 `json:"point"`
	Recall float64            `json:"recall_at_10"`
	QPS    float64            `json:"qps"`
	CPUQPS float64            `json:"qps_cpu"`
}

// Name is the engine and its setting, as the table and the plot call it.
func (r Result) Name() string { return strings.TrimSpace(r.Engine + " " + r.Setting) }

// WriteReport writes the table, or one JSON object a result when asJSON.
func WriteReport(w io.Writer, rep *Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rep.Results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	serve := "a process confined to one CPU"
	for _, r := range rep.Results {
		if r.ServeCPUs != 1 && r.Error == "" {
			serve = "processes that could use more than one CPU (affinity not set)"
		}
	}
	fmt.Fprintf(w, "%s x %d vectors%s, %d queries, recall@%d against exact search; %s, load %.2f at the start\n",
		commas(float64(rep.N)), rep.Dim, prefixed(", ", rep.Data), rep.Queries, rep.K, rep.Date, rep.Load1)
	fmt.Fprintf(w, "builds on %d threads, each engine in its own process; queries by %s; peak RSS from each child's rusage\n", rep.Threads, serve)
	head := []string{"engine", "version", "build s", "build peak", "index", "load s", "serve RSS", "sweep point", "recall@10", "QPS", "QPS/CPU-s"}
	lines := [][]string{head}
	for _, r := range rep.Results {
		load := "-"
		if len(r.Points) > 0 {
			load = fmt.Sprintf("%.2f", r.LoadS)
		}
		first := []string{r.Name(), r.Version, fmt.Sprintf("%.1f", r.BuildS), humanBytes(r.BuildPeakRSS), humanBytes(r.IndexBytes),
			load, humanBytes(r.ServeRSS)}
		if len(r.Points) == 0 {
			lines = append(lines, append(first, "-", "-", "-", "-"))
			continue
		}
		for i, p := range r.Points {
			l := make([]string, len(first))
			if i == 0 {
				copy(l, first)
			}
			lines = append(lines, append(l, pointText(p.Point), fmt.Sprintf("%.4f", p.Recall), commas(p.QPS), commas(p.CPUQPS)))
		}
	}
	widths := make([]int, len(head))
	for _, l := range lines {
		for i, c := range l {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, l := range lines {
		cells := make([]string, len(l))
		for i, c := range l {
			if i == 0 || i == 1 || i == 7 {
				cells[i] = fmt.Sprintf("%-*s", widths[i], c)
			} else {
				cells[i] = fmt.Sprintf("%*s", widths[i], c)
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(strings.Join(cells, "  "), " ")); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "recall@%d at %s queries/s or more (each engine's best such point):\n", rep.K, commas(rep.AtQPS))
	for _, r := range rep.Results {
		if r.Error != "" {
			fmt.Fprintf(w, "  %-*s %s\n", widths[0], r.Name(), r.Error)
			continue
		}
		best, ok := bestAt(r.Points, rep.AtQPS)
		if !ok {
			fastest := 0.0
			for _, p := range r.Points {
				fastest = math.Max(fastest, p.QPS)
			}
			fmt.Fprintf(w, "  %-*s not reached (fastest point %s queries/s)\n", widths[0], r.Name(), commas(fastest))
			continue
		}
		fmt.Fprintf(w, "  %-*s %.4f at %s queries/s (%s)\n", widths[0], r.Name(), best.Recall, commas(best.QPS), pointText(best.Point))
	}
	return nil
}

// bestAt is the point with the highest recall among those at qps or faster.
func bestAt(points []Point, qps float64) (Point, bool) {
	var best Point
	ok := false
	for _, p := range points {
		if p.QPS >= qps && (!ok || p.Recall > best.Recall || p.Recall == best.Recall && p.QPS > best.QPS) {
			best, ok = p, true
		}
	}
	return best, ok
}

// pointText writes a sweep point as key=value pairs in key order: "ef=64", "nprobes=20 refine_factor=4".
func pointText(p map[string]float64) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(p[k], 'g', -1, 64)
	}
	return strings.Join(parts, " ")
}

// WritePlot draws the report as an SVG page of one RecallChart.
func WritePlot(w io.Writer, rep *Report) error {
	title := fmt.Sprintf("kairos bench ann: %s x %d vectors%s, %s", commas(float64(rep.N)), rep.Dim, prefixed(", ", rep.Data), rep.Date)
	return svgplot.Page(w, title, RecallChart(rep, ""))
}

// RecallChart is recall@10 against queries per second (a log scale), one line per engine
// setting through its points that no other of its points beats on both (its Pareto front),
// every point marked; title says which collection ("": none).
func RecallChart(rep *Report, title string) svgplot.LineChart {
	c := svgplot.LineChart{Title: strings.TrimSpace(title + fmt.Sprintf(" recall@%d against queries per second, one CPU", rep.K)),
		XLabel: "queries per second (log scale)", YLabel: fmt.Sprintf("recall@%d", rep.K), LogX: true, Markers: true}
	for _, r := range rep.Results {
		front := pareto(r.Points)
		if len(front) == 0 {
			continue
		}
		s := svgplot.Series{Name: r.Name()}
		for _, p := range front {
			s.X, s.Y = append(s.X, p.QPS), append(s.Y, p.Recall)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// pareto returns the points no other point beats on both recall and QPS, by ascending QPS.
func pareto(points []Point) []Point {
	var out []Point
	for i, p := range points {
		if p.QPS <= 0 {
			continue
		}
		dominated := false
		for j, q := range points {
			if j != i && q.QPS >= p.QPS && q.Recall >= p.Recall && (q.QPS > p.QPS || q.Recall > p.Recall || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Point) int {
		switch {
		case a.QPS < b.QPS:
			return -1
		case a.QPS > b.QPS:
			return 1
		}
		return 0
	})
	return out
}

func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// commas writes a rate or count rounded, with thousands separators: 12,345.
func commas(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// humanBytes writes a byte count in MB or GB (decimal, as bench scale's table), "-" for none.
func humanBytes(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}
