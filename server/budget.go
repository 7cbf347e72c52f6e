package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// hitBudget bounds the memory of the searches in flight. Memory grows with the hits a
// request asks for (its passages, their rerank candidates, its JSON), not with the number
// of requests, so each request holds its total hits (the sum of its queries' k) of a
// weighted semaphore of Options.MaxInFlightHits while it runs.
type hitBudget struct {
	sem      *semaphore.Weighted
	capacity int64

	// Returning memory after a burst: the first request of at least freeHits to finish
	// while no other such request runs frees the heap to the OS, at most once per
	// freeEvery, so a steady load does not pay a forced GC per request.
	freeHits  int64
	freeEvery time.Duration
	large     atomic.Int64 // requests of at least freeHits hits in flight
	mu        sync.Mutex
	lastFree  time.Time // guarded by mu
	freeOS    func()    // debug.FreeOSMemory; a field so tests can count calls
	freed     atomic.Int64
}

func newHitBudget(o Options) *hitBudget {
	return &hitBudget{sem: semaphore.NewWeighted(int64(o.MaxInFlightHits)), capacity: int64(o.MaxInFlightHits),
		freeHits: int64(o.FreeMemoryHits), freeEvery: o.FreeMemoryInterval, freeOS: debug.FreeOSMemory}
}

// busyError is answered 429 with Retry-After: the server is overloaded, and the client
// should slow down and retry (503 would say the server itself is unavailable).
type busyError struct{ capacity int64 }

func (e *busyError) Error() string {
	return "server busy: the searches in flight already hold the " + strconv.FormatInt(e.capacity, 10) +
		" hits they may (max_in_flight_hits); retry later"
}

// acquire waits for hits of the budget until ctx is done. The release it returns must be
// called once the response is written. Only a wait for a full budget is "busy": hits that are
// free are taken even when ctx is already done (semaphore.Acquire would refuse them), so a
// request out of time fails as timed out where it runs, not as an overload it never met.
func (b *hitBudget) acquire(ctx context.Context, hits int) (release func(), err error) {
	n := min(int64(hits), b.capacity)
	if !b.sem.TryAcquire(n) {
		if err := b.sem.Acquire(ctx, n); err != nil {
			return nil, &busyError{capacity: b.capacity}
		}
	}
	large := b.freeHits > 0 && n >= b.freeHits
	if large {
		b.large.Add(1)
	}
	return func() {
		b.sem.Release(n)
		if large && b.large.Add(-1) == 0 {
			b.maybeFree()
		}
	}, nil
}

func (b *hitBudget) maybeFree() {
	b.mu.Lock()
	if time.Since(b.lastFree) < b.freeEvery {
		b.mu.Unlock()
		return
	}
	b.lastFree = time.Now()
	b.mu.Unlock()
	b.freed.Add(1)
	// FreeOSMemory runs a full GC; after the response is written, off the request's path.
	go b.freeOS()
}

// errResponseTooLarge stops encoding a response at Options.MaxResponseBytes.
var errResponseTooLarge = errors.New("response too large")

// cappedBuffer is a bytes.Buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		return 0, errResponseTooLarge
	}
	return c.Buffer.Write(p)
}

// maxPooledResponse bounds the buffers kept for reuse: a response of a usual size (k 10 is
// about 10 KB) reuses one, a rare large one is left to the collector rather than held.
const maxPooledResponse = 256 << 10

// encodeCapped encodes v as JSON of at most max bytes, into a buffer from s.bufs that
// writeEncoded gives back: the response buffer was an eighth of the bytes a search request
// allocated, and under load the collector's work is the tail of the latency (issue 29).
// Over max, the response is refused with a 400 naming the limit: the client asked for more
// than the server answers at once.
func (s *Server) encodeCapped(v any, max int64) (*cappedBuffer, error) {
	buf, _ := s.bufs.Get().(*cappedBuffer)
	if buf == nil {
		buf = &cappedBuffer{}
	}
	buf.Reset()
	buf.max = int(max)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.putBuffer(buf)
		if errors.Is(err, errResponseTooLarge) {
			return nil, badRequest("the response is over the limit of %d bytes (max_response_bytes): ask for fewer queries or a smaller k", max)
		}
		return nil, err
	}
	return buf, nil
}

func (s *Server) putBuffer(buf *cappedBuffer) {
	if buf.Cap() <= maxPooledResponse {
		s.bufs.Put(buf)
	}
}

// writeEncoded writes a body made by encodeCapped, with its length (not chunked), and gives
// the buffer back.
func (s *Server) writeEncoded(w http.ResponseWriter, status int, body *cappedBuffer) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	w.Write(body.Bytes())
	s.putBuffer(body)
}
