package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/kairos-rag/kairos/internal/tty"
)

// loopProgress reports a long loop of a command (the queries of search --batch and eval, the
// texts of embed): how many of the total are done, the rate and the ETA. On a terminal the
// line is redrawn in place every second; anywhere else a plain line is printed every
// plainEvery. A loop that ends before its first report prints nothing: short runs stay
// quiet. It is used by the loop's goroutine alone.
type loopProgress struct {
	w        io.Writer
	tty      bool
	what     string // the unit counted, plural ("queries")
	total    int    // 0 when unknown
	n        int
	start    time.Time
	next     time.Time // when the next report is due
	every    time.Duration
	reported int // n at the last report; -1 before the first
	finished bool
	now      func() time.Time
}

// plainEvery is how often a loop not on a terminal reports.
const plainEvery = 10 * time.Second

func newLoopProgress(w io.Writer, what string, total int) *loopProgress {
	p := &loopProgress{w: w, tty: tty.Is(w), what: what, total: total, now: time.Now, reported: -1}
	p.every = plainEvery
	if p.tty {
		p.every = time.Second
	}
	p.start = p.now()
	p.next = p.start.Add(p.every)
	return p
}

// add counts k more done and reports if a report is due.
func (p *loopProgress) add(k int) {
	p.n += k
	if now := p.now(); !now.Before(p.next) {
		p.report(now, false)
		p.next = now.Add(p.every)
	}
}

// done ends the line a terminal redraws, after a last report, if anything was reported and
// the count moved since (a plain line of the same count would repeat the one before). Only
// its first call prints: a deferred call covers the errors.
func (p *loopProgress) done() {
	if !p.finished && p.reported >= 0 && (p.tty || p.n != p.reported) {
		p.report(p.now(), true)
	}
	p.finished = true
}

func (p *loopProgress) report(now time.Time, last bool) {
	el := now.Sub(p.start).Seconds()
	rate := float64(p.n) / max(el, 1e-9)
	line := fmt.Sprintf("%d %s", p.n, p.what)
	if p.total > 0 {
		line = fmt.Sprintf("%d/%d %s (%.1f%%)", p.n, p.total, p.what, 100*float64(p.n)/float64(p.total))
	}
	line += fmt.Sprintf(", %.0f/s", rate)
	if p.total > 0 && !last && rate > 0 {
		line += ", ETA " + time.Duration(float64(p.total-p.n)/rate*float64(time.Second)).Round(time.Second).String()
	}
	switch {
	case p.tty && last:
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", line)
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	default:
		fmt.Fprintln(p.w, line)
	}
	p.reported = p.n
}
