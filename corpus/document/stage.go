package document

import (
	"io"
	"sync/atomic"
	"time"
)

// StageClock sums how long one stage of an input pipeline (decompressing, parsing and
// cleaning, splitting) works, over every goroutine that runs it, and how much it does. Busy
// time leaves out the stage's waits for its input, so comparing the stages' busy times (and
// each with the build's wall time) shows which one holds the pipeline back, which wall time
// alone cannot when they run side by side.
//
// A nil *StageClock records nothing: stages time themselves whether or not anyone listens.
// It is safe for concurrent use.
type StageClock struct {
	busy, items, bytes atomic.Int64
}

// Add records busy time and the items and bytes it processed.
func (c *StageClock) Add(busy time.Duration, items, bytes int64) {
	if c == nil {
		return
	}
	c.busy.Add(int64(busy))
	c.items.Add(items)
	c.bytes.Add(bytes)
}

// Busy returns the time recorded, summed over goroutines.
func (c *StageClock) Busy() time.Duration {
	if c == nil {
		return 0
	}
	return time.Duration(c.busy.Load())
}

// Items returns the items recorded (what an item is, the stage says).
func (c *StageClock) Items() int64 {
	if c == nil {
		return 0
	}
	return c.items.Load()
}

// Bytes returns the bytes recorded.
func (c *StageClock) Bytes() int64 {
	if c == nil {
		return 0
	}
	return c.bytes.Load()
}

// TimedReader records in Clock the time spent in R's Read and the bytes it returns (no
// items): the cost of a stage that is a reader (a decompressor). Waited, when set, also
// sums that time for the goroutine that reads, so that a stage reading its input can leave
// the waits out of its own busy time.
type TimedReader struct {
	R      io.Reader
	Clock  *StageClock
	Waited time.Duration // read by the one goroutine that calls Read
}

func (t *TimedReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := t.R.Read(p)
	d := time.Since(start)
	t.Waited += d
	t.Clock.Add(d, 0, int64(n))
	return n, err
}
