package cli

import (
	"strings"
	"testing"
	"time"
)

// A loop's progress, off a terminal: a plain line at each report with the count, the share of
// the total, the rate and the ETA, and a last line at the end; nothing for a loop that ends
// before its first report.
func TestLoopProgress(t *testing.T) {
	var b strings.Builder
	clock := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	p := newLoopProgress(&b, "queries", 1000)
	p.now = func() time.Time { return clock }
	p.start, p.next = clock, clock.Add(p.every)
	for range 1000 {
		clock = clock.Add(100 * time.Millisecond) // 10 queries a second
		p.add(1)
	}
	// A report every 10 s, the last at the end of the run.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 10 || lines[0] != "100/1000 queries (10.0%), 10/s, ETA 1m30s" || lines[9] != "1000/1000 queries (100.0%), 10/s, ETA 0s" {
		t.Errorf("got %q", b.String())
	}
	b.Reset()
	p.done() // the same count: no line repeating the last
	if b.Len() != 0 {
		t.Errorf("done repeated the last count: %q", b.String())
	}
	p.finished = false
	p.add(5) // within the report interval
	p.done()
	p.done() // a deferred call after the explicit one
	if b.String() != "1005/1000 queries (100.5%), 10/s\n" {
		t.Errorf("a last line of a new count, once: %q", b.String())
	}
	if strings.ContainsAny(b.String(), "\r\x1b") {
		t.Errorf("control characters off a terminal: %q", b.String())
	}

	var quiet strings.Builder
	q := newLoopProgress(&quiet, "texts", 0)
	q.add(5)
	q.done()
	if quiet.Len() != 0 {
		t.Errorf("a loop shorter than a report printed %q", quiet.String())
	}
}
