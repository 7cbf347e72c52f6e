package indexer

import (
	"fmt"
	"github.com/kairos-rag/kairos/internal/tty"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress reports a build's true counts per stage: documents read (and the share of the input
// bytes that took), passages split, passages indexed in BM25 and, with an encoder, passages
// embedded; each with its rate, and an ETA set by the slowest stage.
//
// On a terminal the line is redrawn in place every second; anywhere else (a log file, a pipe,
// CI) a plain line is printed every plainEvery, with no carriage returns or escape codes.
type progress struct {
	w          io.Writer
	tty        bool
	plainEvery time.Duration
	total      int64 // input bytes, 0 if unknown
	dense      bool  // an embedding stage runs

	bytes, docs, split, indexed, embedded atomic.Int64
	readDone                              atomic.Bool // every input has been read

	startTime time.Time
	mu        sync.Mutex
}

// newProgress reports to w (nil: nowhere) on a build of totalBytes input bytes (0: unknown).
func newProgress(w io.Writer, totalBytes int64, dense bool) *progress {
	return &progress{w: w, tty: tty.Is(w), plainEvery: 5 * time.Second, total: totalBytes, dense: dense}
}

func (p *progress) read(bytes int64, docs int) {
	p.bytes.Add(bytes)
	p.docs.Add(int64(docs))
}
func (p *progress) passagesSplit(n int)    { p.split.Add(int64(n)) }
func (p *progress) inputsRead()            { p.readDone.Store(true) }
func (p *progress) passagesIndexed(n int)  { p.indexed.Add(int64(n)) }
func (p *progress) passagesEmbedded(n int) { p.embedded.Add(int64(n)) }

// start begins reporting; the returned function stops it.
func (p *progress) start() (stop func()) {
	p.startTime = time.Now()
	if p.w == nil {
		return func() {}
	}
	every := p.plainEvery
	if p.tty {
		every = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.print(false)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// line renders the counts; el is the time since start.
func (p *progress) line(el time.Duration) string {
	sec := max(el.Seconds(), 1e-9)
	docs, split, indexed := p.docs.Load(), p.split.Load(), p.indexed.Load()
	var b strings.Builder
	fmt.Fprintf(&b, "read %d docs", docs)
	frac := 0.0
	if bytes := p.bytes.Load(); p.total > 0 && bytes > 0 {
		frac = min(float64(bytes)/float64(p.total), 1)
		fmt.Fprintf(&b, " (%.0f%% of input)", 100*frac)
	}
	// A stage that has caught up with a finished reader says so: its average rate would only
	// decay from then on.
	stage := func(n int64) string {
		if p.readDone.Load() && n >= split {
			return fmt.Sprintf("%d (done)", n)
		}
		return fmt.Sprintf("%d (%.0f/s)", n, float64(n)/sec)
	}
	fmt.Fprintf(&b, ", split %d passages, indexed %s", split, stage(indexed))
	if p.dense {
		fmt.Fprintf(&b, ", embedded %s", stage(p.embedded.Load()))
	}
	fmt.Fprintf(&b, ", %s", el.Round(time.Second))
	if eta, ok := p.eta(el, frac); ok {
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	return b.String()
}

// eta is the time the slowest stage needs to finish at its rate so far. The passages still to
// come are estimated from the share of the input read; without an input size there is none.
func (p *progress) eta(el time.Duration, frac float64) (time.Duration, bool) {
	if frac <= 0 || el <= 0 {
		return 0, false
	}
	sec := el.Seconds()
	total := float64(p.split.Load()) / frac // passages expected in all
	worst := sec/frac - sec                 // reading the rest of the input
	stages := []int64{p.indexed.Load()}
	if p.dense {
		stages = append(stages, p.embedded.Load())
	}
	for _, done := range stages {
		if done <= 0 {
			return 0, false // a stage that has not started yet has no rate
		}
		worst = max(worst, (total-float64(done))/(float64(done)/sec))
	}
	return time.Duration(max(worst, 0) * float64(time.Second)), true
}

func (p *progress) print(final bool) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.line(time.Since(p.startTime))
	switch {
	case !p.tty:
		fmt.Fprintln(p.w, l)
	case final:
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", l)
	default:
		fmt.Fprintf(p.w, "\r%s\x1b[K", l)
	}
}

// finish prints the final counts once the build has committed.
func (p *progress) finish() { p.print(true) }
