package server

import (
	"strconv"
	"testing"
	"time"
)

// A bucket holds burst turns and refills at the rate; each key has its own, and full buckets
// are forgotten so the map does not grow with the clients seen.
func TestRateLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newRateLimiter(6, 2, func() time.Time { return now }) // one token every 10 s
	steps := []struct {
		key  string
		at   time.Duration // since the start
		ok   bool
		wait time.Duration
	}{
		{"a", 0, true, 0},
		{"a", 0, true, 0},
		{"a", 0, false, 10 * time.Second},
		{"b", 0, true, 0}, // another owner's bucket
		{"a", 4 * time.Second, false, 6 * time.Second},
		{"a", 10 * time.Second, true, 0},
		{"a", 10 * time.Second, false, 10 * time.Second},
	}
	start := now
	for i, s := range steps {
		now = start.Add(s.at)
		ok, wait := l.allow(s.key)
		if ok != s.ok || wait != s.wait {
			t.Errorf("step %d (%s at %s): %v %s, want %v %s", i, s.key, s.at, ok, wait, s.ok, s.wait)
		}
	}
	for i := range 1000 {
		l.allow("client-" + strconv.Itoa(i))
	}
	now = now.Add(time.Minute) // every bucket has refilled
	l.allow("late")
	if n := l.size(); n != 1 {
		t.Errorf("%d buckets held after all refilled, want 1", n)
	}
	if ok, _ := newRateLimiter(-1, 1, time.Now).allow("x"); !ok {
		t.Error("a negative rate limits")
	}
}
