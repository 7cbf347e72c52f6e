package indexer

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/internal/tty"
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
	// copying says the run is a compaction: its input is the passages of the generation it
	// compacts (total and bytes count passages) and its vectors are read, not embedded.
	copying bool

	bytes, docs, split, indexed, embedded atomic.Int64
	readDone                              atomic.Bool // every input has been read
	// The graph's repair pass (backend.RepairReporter), which the final commit runs after the
	// last passage is embedded: nodes checked of those it checks.
	repairing                    atomic.Bool
	repairChecked, repairToCheck atomic.Int64
	// mergingLists says the pass is the inverted file's merge of its list segments, whose
	// steps (three a list) are counted in the same fields.
	mergingLists atomic.Bool

	startTime time.Time
	mu        sync.Mutex
	// samples are the counts at each report of the last rateWindow (and one before it), so
	// rates and the ETA follow the build's current pace, not its average since the start: a
	// build's first minute (loading, warm-up) or a change of pace would otherwise sway the
	// ETA for the rest of the run.
	samples []sample
	// repairFrom is when the repair pass began, as the last report before it saw (observe):
	// its rate counts from then, not from the window's start, where it had not begun.
	repairFrom time.Duration
	repairSeen bool

	stages stageClocks // the busy time of each stage, for the Summary
}

// sample is the counts at one moment of a build.
type sample struct {
	at                                        time.Duration // since start
	bytes, split, indexed, embedded, repaired int64
}

// rateWindow is how far back rates look. Embedding counts arrive a chunk (256 passages on a
// CPU, several seconds) at a time; a minute holds enough of them for a steady rate.
const rateWindow = time.Minute

// minRateSpan is the least span of samples a windowed rate needs; below it (the first
// seconds) the average since the start is used.
const minRateSpan = 3 * time.Second

// observe records the counts at el and forgets the samples the window no longer needs.
// The caller holds mu.
func (p *progress) observe(el time.Duration) {
	if !p.repairSeen && p.repairing.Load() {
		p.repairSeen, p.repairFrom = true, el
		if len(p.samples) > 0 {
			p.repairFrom = p.samples[len(p.samples)-1].at
		}
	}
	p.samples = append(p.samples, sample{at: el, bytes: p.bytes.Load(), split: p.split.Load(),
		indexed: p.indexed.Load(), embedded: p.embedded.Load(), repaired: p.repairChecked.Load()})
	// Keep one sample at or before the window's start, as the base of the rates.
	i := 0
	for i+1 < len(p.samples) && p.samples[i+1].at <= el-rateWindow {
		i++
	}
	p.samples = p.samples[i:]
}

// rate is a count's rate per second over the window ending at el: now is its value at el and
// get reads it from a sample. Without samples spanning minRateSpan it is the average since
// the start.
func (p *progress) rate(el time.Duration, now int64, get func(sample) int64) float64 {
	if len(p.samples) > 0 {
		base := p.samples[0]
		if span := el - base.at; span >= minRateSpan {
			return float64(now-get(base)) / span.Seconds()
		}
	}
	return float64(now) / max(el.Seconds(), 1e-9)
}

// repairRate is the repair pass's rate over the window ending at el, or since the pass began
// when that was later than the window's start (the samples before it count nothing). The
// caller holds mu.
func (p *progress) repairRate(el time.Duration) float64 {
	from := p.repairFrom
	checked, base := p.repairChecked.Load(), int64(0)
	if len(p.samples) > 0 && p.samples[0].at > from {
		from, base = p.samples[0].at, p.samples[0].repaired
	}
	span := el - from
	if span <= 0 {
		return 0
	}
	return float64(checked-base) / span.Seconds()
}

// newProgress reports to w (nil: nowhere) on a build of totalBytes input bytes (0: unknown).
func newProgress(w io.Writer, totalBytes int64, dense bool) *progress {
	return &progress{w: w, tty: tty.Is(w), plainEvery: 5 * time.Second, total: totalBytes, dense: dense}
}

// newCopyProgress reports to w (nil: nowhere) on a compaction of passages live passages,
// with vectors or without.
func newCopyProgress(w io.Writer, passages int, vectors bool) *progress {
	p := newProgress(w, int64(passages), vectors)
	p.copying = true
	return p
}

func (p *progress) read(bytes int64, docs int) {
	p.bytes.Add(bytes)
	p.docs.Add(int64(docs))
}
func (p *progress) passagesSplit(n int)    { p.split.Add(int64(n)) }
func (p *progress) inputsRead()            { p.readDone.Store(true) }
func (p *progress) passagesIndexed(n int)  { p.indexed.Add(int64(n)) }
func (p *progress) passagesEmbedded(n int) { p.embedded.Add(int64(n)) }

// graphRepair is the graph's repair-pass report (backend.RepairReporter): checked of total
// nodes. The pass's goroutines report at once, so the count only moves forward.
func (p *progress) graphRepair(checked, total int) {
	p.repairToCheck.Store(int64(total))
	p.repairing.Store(true)
	for {
		old := p.repairChecked.Load()
		if int64(checked) <= old || p.repairChecked.CompareAndSwap(old, int64(checked)) {
			return
		}
	}
}

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
	docs, split, indexed := p.docs.Load(), p.split.Load(), p.indexed.Load()
	var b strings.Builder
	frac := 0.0
	if bytes := p.bytes.Load(); p.total > 0 && bytes > 0 {
		frac = min(float64(bytes)/float64(p.total), 1)
	}
	if p.copying {
		fmt.Fprintf(&b, "copied %d of %s (%.0f%%)", p.bytes.Load(), countOf(p.total, "passage"), 100*frac)
	} else {
		fmt.Fprintf(&b, "read %s", countOf(docs, "document"))
		if frac > 0 {
			fmt.Fprintf(&b, " (%.0f%% of input)", 100*frac)
		}
	}
	// A stage that has caught up with a finished reader says so: its average rate would only
	// decay from then on.
	stage := func(n int64, get func(sample) int64) string {
		if p.readDone.Load() && n >= split {
			return fmt.Sprintf("%d (done)", n)
		}
		return fmt.Sprintf("%d (%.0f/s)", n, p.rate(el, n, get))
	}
	if !p.copying {
		fmt.Fprintf(&b, ", split %s", countOf(split, "passage"))
	}
	fmt.Fprintf(&b, ", indexed %s", stage(indexed, func(s sample) int64 { return s.indexed }))
	if p.dense {
		verb := "embedded"
		if p.copying {
			verb = "vectors"
		}
		fmt.Fprintf(&b, ", %s %s", verb, stage(p.embedded.Load(), func(s sample) int64 { return s.embedded }))
	}
	if p.repairing.Load() {
		checked, total := p.repairChecked.Load(), p.repairToCheck.Load()
		if p.mergingLists.Load() {
			fmt.Fprintf(&b, ", merging lists: %d of %d steps", checked, total)
		} else {
			fmt.Fprintf(&b, ", graph repair: checked %d of %d nodes with few in-links", checked, total)
		}
		if checked < total {
			fmt.Fprintf(&b, " (%.0f/s)", p.repairRate(el))
		} else if p.mergingLists.Load() {
			b.WriteString(", writing")
		} else {
			b.WriteString(", linking and saving")
		}
	}
	fmt.Fprintf(&b, ", %s", el.Round(time.Second))
	if eta, ok := p.eta(el, frac); ok {
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	return b.String()
}

// countOf is "1 document", "2 documents".
func countOf(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// eta is the time the slowest stage needs to finish at its current rate (over the window,
// see rate). The passages still to come are estimated from the share of the input read;
// without an input size there is none.
func (p *progress) eta(el time.Duration, frac float64) (time.Duration, bool) {
	if p.repairing.Load() { // the pass starts once every stage is done: its rest is the ETA
		left := p.repairToCheck.Load() - p.repairChecked.Load()
		if r := p.repairRate(el); r > 0 {
			return time.Duration(float64(max(left, 0)) / r * float64(time.Second)), true
		}
		return 0, false
	}
	if frac <= 0 || el <= 0 {
		return 0, false
	}
	total := float64(p.split.Load()) / frac // passages expected in all
	worst := 0.0                            // reading the rest of the input
	if frac < 1 {
		if r := p.rate(el, p.bytes.Load(), func(s sample) int64 { return s.bytes }); r > 0 {
			worst = float64(p.total-p.bytes.Load()) / r
		} else {
			worst = el.Seconds()/frac - el.Seconds()
		}
	}
	type stage struct {
		done int64
		get  func(sample) int64
	}
	stages := []stage{{p.indexed.Load(), func(s sample) int64 { return s.indexed }}}
	if p.dense {
		stages = append(stages, stage{p.embedded.Load(), func(s sample) int64 { return s.embedded }})
	}
	for _, st := range stages {
		if st.done <= 0 {
			return 0, false // a stage that has not started yet has no rate
		}
		r := p.rate(el, st.done, st.get)
		if r <= 0 { // nothing in the window (one long chunk): the average since the start
			r = float64(st.done) / el.Seconds()
		}
		worst = max(worst, (total-float64(st.done))/r)
	}
	return time.Duration(max(worst, 0) * float64(time.Second)), true
}

func (p *progress) print(final bool) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.startTime)
	p.observe(el)
	l := p.line(el)
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
