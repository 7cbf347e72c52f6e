package scalebench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/kairos-rag/kairos/search"
)

// Latency is one mode's single-thread query latency.
type Latency struct {
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	MeanMS  float64 `json:"mean_ms"`
	Queries int     `json:"queries"`
	Empty   int     `json:"empty"` // queries with no hit
}

// timeQueries runs the queries one after another on one thread (GOMAXPROCS 1 while timed;
// an ONNX Runtime encoder keeps its own threads), after warmup untimed ones.
func timeQueries(ctx context.Context, ix *search.Index, mode search.Mode, queries []string, k, warmup int, p *progress) (Latency, error) {
	for i := range min(warmup, len(queries)) {
		if _, err := ix.Search(ctx, search.Request{Text: queries[i], K: k, Mode: mode}); err != nil {
			return Latency{}, fmt.Errorf("%s query %d: %w", mode, i+1, err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ds := make([]time.Duration, 0, len(queries))
	var l Latency
	var total time.Duration
	for i, q := range queries {
		start := time.Now()
		hits, err := ix.Search(ctx, search.Request{Text: q, K: k, Mode: mode})
		d := time.Since(start)
		if err != nil {
			return Latency{}, fmt.Errorf("%s query %d %q: %w", mode, i+1, q, err)
		}
		if len(hits) == 0 {
			l.Empty++
		}
		ds = append(ds, d)
		total += d
		p.report("querying %s: %d/%d queries", mode, i+1, len(queries))
	}
	p.done()
	l.P50MS, l.P99MS = search.PercentileMS(ds, 0.50), search.PercentileMS(ds, 0.99)
	l.MeanMS = float64(total.Nanoseconds()) / 1e6 / float64(len(ds))
	l.Queries = len(ds)
	return l, nil
}

// progress prints true counts at most every interval: redrawn in place on a terminal,
// one plain line each time elsewhere (as the indexer's progress does).
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  time.Time
	line  string
}

func newProgress(w io.Writer, tty bool) *progress {
	every := 5 * time.Second
	if tty {
		every = time.Second
	}
	return &progress{w: w, tty: tty, every: every, last: time.Now()}
}

func (p *progress) report(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.line = fmt.Sprintf(format, args...)
	if time.Since(p.last) < p.every {
		return
	}
	p.last = time.Now()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.line)
	} else {
		fmt.Fprintln(p.w, p.line)
	}
}

// done prints the final count of the stage.
func (p *progress) done() {
	if p == nil || p.w == nil || p.line == "" {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", p.line)
	} else {
		fmt.Fprintln(p.w, p.line)
	}
	p.line, p.last = "", time.Now()
}
