package indexer

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// progress prints one status line a second: passages indexed, rate, and, when the input size
// is known, the share of input read and an ETA.
type progress struct {
	w         io.Writer
	total     int64 // input bytes, 0 if unknown
	bytes     atomic.Int64
	passages  atomic.Int64
	vectors   atomic.Int64 // passages embedded; stays 0 without an encoder
	startTime time.Time
	mu        sync.Mutex
}

func newProgress(w io.Writer, totalBytes int64) *progress {
	return &progress{w: w, total: totalBytes}
}

func (p *progress) read(n int64)   { p.bytes.Add(n) }
func (p *progress) indexed(n int)  { p.passages.Add(int64(n)) }
func (p *progress) embedded(n int) { p.vectors.Add(int64(n)) }

// start begins printing; the returned function stops it.
func (p *progress) start() (stop func()) {
	p.startTime = time.Now()
	if p.w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
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

func (p *progress) line() string {
	el := time.Since(p.startTime).Seconds()
	n := p.passages.Load()
	rate := float64(n) / max(el, 1e-9)
	s := fmt.Sprintf("indexed %d passages, %.0f passages/s, %.1fs", n, rate, el)
	if v := p.vectors.Load(); v > 0 {
		s += fmt.Sprintf(", embedded %d (%.0f/s)", v, float64(v)/max(el, 1e-9))
	}
	if b := p.bytes.Load(); p.total > 0 && b > 0 {
		frac := min(float64(b)/float64(p.total), 1)
		eta := el/frac - el
		s += fmt.Sprintf(", input %.0f%%, ETA %s", 100*frac, time.Duration(eta*float64(time.Second)).Round(time.Second))
	}
	return s
}

func (p *progress) print(final bool) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	end := "\r"
	if final {
		end = "\n"
	}
	fmt.Fprintf(p.w, "\r%s\x1b[K%s", p.line(), end)
}

func (p *progress) finish(passages int) {
	p.passages.Store(int64(passages))
	p.print(true)
}
