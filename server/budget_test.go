package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// batchBody is a POST /v1/search body of n queries of k hits each.
func batchBody(n, k int) string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = `{"text":"malaria vaccine","k":` + strconv.Itoa(k) + `}`
	}
	return `{"queries":[` + strings.Join(qs, ",") + `]}`
}

func TestRequestBounds(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		path    string
		body    string
		code    int
		wantErr string // the error message; "" for a 200
	}{
		{"within every limit", Options{MaxTotalHits: 40}, "/v1/search", batchBody(4, 10), 200, ""},
		{"total hits over the limit", Options{MaxTotalHits: 39}, "/v1/search", batchBody(4, 10), 400,
			"queries: 4 queries ask for 40 hits in all (the sum of their k), over the limit of 39 (max_total_hits): ask for fewer queries or a smaller k"},
		{"default total hits refuses 100 x 300", Options{}, "/v1/search", batchBody(100, 300), 400,
			"queries: 100 queries ask for 30000 hits in all (the sum of their k), over the limit of 10000 (max_total_hits): ask for fewer queries or a smaller k"},
		{"wikichat total hits", Options{MaxTotalHits: 5}, "/search", `{"query":["a","b"],"num_blocks":3}`, 400,
			"queries: 2 queries ask for 6 hits in all (the sum of their k), over the limit of 5 (max_total_hits): ask for fewer queries or a smaller k"},
		{"response bytes over the limit", Options{MaxResponseBytes: 2000}, "/v1/search", batchBody(2, 10), 400,
			"the response is over the limit of 2000 bytes (max_response_bytes): ask for fewer queries or a smaller k"},
		{"wikichat response bytes", Options{MaxResponseBytes: 500}, "/search", `{"query":["malaria"],"num_blocks":5}`, 400,
			"the response is over the limit of 500 bytes (max_response_bytes): ask for fewer queries or a smaller k"},
		{"response within the limit", Options{MaxResponseBytes: 1 << 20}, "/v1/search", batchBody(2, 10), 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestServer(t, tt.opts)
			w := do(s, "POST", tt.path, tt.body)
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.code, w.Body.String())
			}
			if tt.wantErr != "" {
				wantError(t, w.Body.Bytes(), tt.wantErr)
			} else if int64(w.Body.Len()) > s.opts.MaxResponseBytes {
				t.Errorf("200 body of %d bytes is over max_response_bytes %d", w.Body.Len(), s.opts.MaxResponseBytes)
			}
		})
	}
}

// TestInFlightHits holds one search and checks that others get in by their hits, not by
// their count: one that fits in what is left runs, one that does not waits until its
// deadline and gets 429 with Retry-After.
func TestInFlightHits(t *testing.T) {
	tests := []struct {
		name   string
		second string
		code   int
	}{
		{"fits beside the held one", batchBody(1, 5), 200},
		{"does not fit: 429 at its deadline", batchBody(1, 6), 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, l := newTestServer(t, Options{MaxTotalHits: 10, MaxInFlightHits: 15})
			e := l.latest()
			e.entered, e.hold = make(chan struct{}, 2), make(chan struct{})
			first := make(chan int)
			go func() { first <- do(s, "POST", "/v1/search", batchBody(1, 10)).Code }()
			<-e.entered
			// The second request's client gives up after 200ms, well before the server's
			// timeout, so the first (held) request is certainly still in flight.
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			second := make(chan *httptest.ResponseRecorder)
			go func() {
				req := httptest.NewRequestWithContext(ctx, "POST", "/v1/search", strings.NewReader(tt.second))
				w := httptest.NewRecorder()
				s.ServeHTTP(w, req)
				second <- w
			}()
			var w *httptest.ResponseRecorder
			select {
			case <-e.entered: // admitted: it holds its hits beside the first
				close(e.hold)
				w = <-second
			case w = <-second:
				close(e.hold)
			}
			if w.Code != tt.code {
				t.Fatalf("second request: %d, want %d: %s", w.Code, tt.code, w.Body.String())
			}
			if tt.code == 429 {
				if w.Header().Get("Retry-After") != "1" {
					t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
				}
				wantError(t, w.Body.Bytes(), "server busy: the searches in flight already hold the 15 hits they may (max_in_flight_hits); retry later")
			}
			if code := <-first; code != 200 {
				t.Fatalf("first request: %d", code)
			}
		})
	}
}

func TestFreeMemoryAfterBurst(t *testing.T) {
	b := newHitBudget(Options{MaxInFlightHits: 100, FreeMemoryHits: 10, FreeMemoryInterval: time.Hour})
	var calls atomic.Int64
	done := make(chan struct{}, 4)
	b.freeOS = func() { calls.Add(1); done <- struct{}{} }
	ctx := context.Background()
	steps := []struct {
		name  string
		hits  int
		freed int64 // b.freed after releasing
	}{
		{"small request frees nothing", 9, 0},
		{"large request alone frees", 10, 1},
		{"second large within the interval does not", 50, 1},
	}
	for _, st := range steps {
		rel, err := b.acquire(ctx, st.hits)
		if err != nil {
			t.Fatal(err)
		}
		rel()
		if got := b.freed.Load(); got != st.freed {
			t.Errorf("%s: freed %d times, want %d", st.name, got, st.freed)
		}
	}
	<-done
	// Two large ones overlapping: only the last to finish frees.
	b.lastFree = time.Time{}
	r1, _ := b.acquire(ctx, 20)
	r2, _ := b.acquire(ctx, 20)
	r1()
	if b.freed.Load() != 1 {
		t.Errorf("freed while another large request was in flight")
	}
	r2()
	if b.freed.Load() != 2 {
		t.Errorf("not freed after the burst: %d", b.freed.Load())
	}
	<-done
	if calls.Load() != 2 {
		t.Errorf("FreeOSMemory called %d times, want 2", calls.Load())
	}
}

func TestBudgetOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"defaults", Options{}, ""},
		{"in-flight below one request", Options{MaxTotalHits: 100, MaxInFlightHits: 99},
			"MaxInFlightHits (99) is below MaxTotalHits (100)"},
		{"negative response bytes", Options{MaxResponseBytes: -1}, "MaxResponseBytes is negative"},
		{"negative total hits", Options{MaxTotalHits: -1}, "MaxTotalHits is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Index = (&fakeLoader{}).index()
			o := tt.opts
			o.SetDefaults()
			err := o.validate()
			if tt.wantErr == "" {
				if err != nil || o.MaxInFlightHits != 4*DefaultMaxTotalHits || o.MaxResponseBytes != DefaultMaxResponseBytes {
					t.Fatalf("defaults: %v %+v", err, o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestResponseBuffersReused: response bodies come from a pool (encodeCapped); each answer
// carries its own length and only its own bytes, whatever the size of the one before it.
func TestResponseBuffersReused(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	for _, tt := range []struct{ path, body string }{
		{"/v1/search", `{"text": "` + newbornQuery + `", "k": 200}`},
		{"/v1/search", `{"text": "` + newbornQuery + `", "k": 1}`},
		{"/search", `{"query": ["malaria vaccine", "tumor suppressor"], "num_blocks": 100}`},
		{"/search", `{"query": "` + newbornQuery + `", "evi_num": 1}`},
		{"/v1/search", `{"text": "` + newbornQuery + `", "k": 1}`},
	} {
		w := do(s, "POST", tt.path, tt.body)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", tt.body, w.Code, w.Body)
		}
		if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
			t.Errorf("%s: Content-Length %q for %d bytes", tt.body, cl, w.Body.Len())
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Errorf("%s: the body is not one JSON value: %.300s", tt.body, w.Body)
		}
	}
}
