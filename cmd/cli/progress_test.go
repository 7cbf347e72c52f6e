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
	p.done()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") // a report every 10 s, then the last
	if len(lines) != 11 || lines[0] != "100/1000 queries (10.0%), 10/s, ETA 1m30s" || lines[10] != "1000/1000 queries (100.0%), 10/s" {
		t.Errorf("got %q", b.String())
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
