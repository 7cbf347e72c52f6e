package server

import (
	"math"
	"sync"
	"time"
)

// rateLimiter is one token bucket per key (an owner of chat turns): each holds up to burst
// tokens, refilled at rate per second, and a request takes one. Buckets that have refilled
// to full are forgotten (a full bucket is what a new key gets), so the map holds only the
// keys seen within about burst/rate seconds, whatever the number of clients.
type rateLimiter struct {
	rate  float64 // tokens per second; <= 0: no limit
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was computed
}

func newRateLimiter(perMinute float64, burst int, now func() time.Time) *rateLimiter {
	return &rateLimiter{rate: perMinute / 60, burst: float64(max(burst, 1)), now: now, buckets: map[string]*bucket{}}
}

// allow takes a token from key's bucket. When there is none it returns false and how long
// until there is one.
func (l *rateLimiter) allow(key string) (bool, time.Duration) {
	if l.rate <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = l.fill(b, now)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration(math.Ceil((1 - b.tokens) / l.rate * float64(time.Second)))
	return false, wait
}

// fill is b's tokens at now.
func (l *rateLimiter) fill(b *bucket, now time.Time) float64 {
	return math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
}

// sweepLocked forgets the full buckets, at most once per refill time of a whole bucket, so
// that the sweep's cost is spread over the requests of that time.
func (l *rateLimiter) sweepLocked(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	if now.Sub(l.swept) < full {
		return
	}
	l.swept = now
	for k, b := range l.buckets {
		if l.fill(b, now) >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// size is the number of buckets held, for tests.
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
