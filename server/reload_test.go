package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReloadUnderLoad hammers a real HTTP server with searches while the index is reloaded
// over and over; run it with -race. No request may fail, no engine may be used after it is
// closed, and every engine but the current one must end up closed exactly once.
func TestReloadUnderLoad(t *testing.T) {
	s, l := newTestServer(t, Options{})
	ts := httptest.NewServer(s)
	defer ts.Close()
	bodies := []struct{ path, body, want string }{
		{"/v1/search", `{"queries":[{"text":"` + newbornQuery + `"},{"text":"myelodysplasia suppressor cells","k":3}]}`, `"passage_id":"4983#0"`},
		{"/search", `{"query":["malaria vaccine","tumor suppressor"],"num_blocks":5}`, `"probability_score"`},
		{"/search", `{"query":"` + newbornQuery + `","evi_num":3}`, `"passage_ids":["4983#0"`},
	}
	var (
		stop     atomic.Bool
		requests atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
		firstErr sync.Once
		errMsg   string
	)
	fail := func(msg string) {
		failures.Add(1)
		firstErr.Do(func() { errMsg = msg })
	}
	for c := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				b := bodies[(c+i)%len(bodies)]
				resp, err := http.Post(ts.URL+b.path, "application/json", strings.NewReader(b.body))
				if err != nil {
					fail(err.Error())
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				requests.Add(1)
				if resp.StatusCode != 200 || !strings.Contains(string(body), b.want) {
					fail(fmt.Sprintf("%s: %d %.200s", b.path, resp.StatusCode, body))
				}
			}
		})
	}
	// At least 20 reloads, and keep reloading until 300 requests have overlapped them.
	reloads := 0
	for i := 0; i < 20 || requests.Load() < 300 && i < 5000; i++ {
		reloads++
		if i%2 == 0 {
			resp, err := http.Post(ts.URL+"/v1/admin/reload", "application/json", nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("reload %d: %v %v", i, err, resp)
			}
			resp.Body.Close()
		} else if err := s.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d of %d requests failed during %d reloads; first: %s", failures.Load(), requests.Load(), reloads, errMsg)
	}
	// A handler releases its load after its response is written, so the last request of
	// a retired load may still be closing it after the clients have read their answers.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.mu.Lock()
		open := 0
		for i, e := range l.engines {
			if i < reloads && !e.closed.Load() {
				open++
			}
		}
		l.mu.Unlock()
		if open == 0 {
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.engines) != reloads+1 {
		t.Fatalf("%d engines loaded, want %d", len(l.engines), reloads+1)
	}
	for i, e := range l.engines {
		if n := e.useAfter.Load(); n != 0 {
			t.Errorf("engine %d searched %d times after Close", i, n)
		}
		if closed := e.closed.Load(); closed != (i < reloads) {
			t.Errorf("engine %d: closed=%v", i, closed)
		}
	}
	t.Logf("%d requests, 0 failures, %d reloads", requests.Load(), reloads)
}

// TestReloadWaitsForInFlight holds a request inside the engine, reloads, and checks that the
// old engine is closed only once that request has finished, and that it succeeds.
func TestReloadWaitsForInFlight(t *testing.T) {
	s, l := newTestServer(t, Options{})
	old := l.latest()
	old.entered, old.hold = make(chan struct{}), make(chan struct{})
	done := make(chan int)
	go func() { done <- do(s, "POST", "/v1/search", `{"text":"`+newbornQuery+`"}`).Code }()
	<-old.entered
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if old.closed.Load() {
		t.Fatal("old engine closed while a request was still using it")
	}
	if w := do(s, "POST", "/v1/search", `{"text":"`+newbornQuery+`"}`); w.Code != 200 || !strings.Contains(w.Body.String(), newbornID) {
		t.Fatalf("request on the new engine: %d", w.Code)
	}
	close(old.hold)
	if code := <-done; code != 200 {
		t.Fatalf("in-flight request got %d", code)
	}
	if !old.closed.Load() {
		t.Error("old engine still open after its last request")
	}
	if l.latest().closed.Load() {
		t.Error("new engine closed")
	}
}

// TestCollectionsReloadApart: two collections searched at once while one of them is
// reloaded over and over (run with -race). Searches of either never fail; only the reloaded
// collection's engines are swapped and closed, the other keeps its first engine open.
func TestCollectionsReloadApart(t *testing.T) {
	a, b := &fakeLoader{passages: sciFactPassages(t, 300)}, &fakeLoader{passages: sciFactPassages(t, 300)}
	s, err := New(Options{Collections: []Collection{{Name: "a", Index: a.index()}, {Name: "b", Index: b.index()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	var (
		stop     atomic.Bool
		failures atomic.Int64
		wg       sync.WaitGroup
	)
	for c := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				path := []string{"/a/search", "/b/search", "/v1/collections/a/search", "/v1/collections/b/search"}[(c+i)%4]
				body := `{"query": "` + newbornQuery + `", "num_blocks": 3}`
				if strings.HasPrefix(path, "/v1/") {
					body = `{"text": "` + newbornQuery + `", "k": 3}`
				}
				if w := do(s, "POST", path, body); w.Code != 200 || !strings.Contains(w.Body.String(), newbornID) {
					failures.Add(1)
				}
			}
		})
	}
	const reloads = 30
	for i := range reloads {
		if i%2 == 0 {
			if w := do(s, "POST", "/v1/collections/b/admin/reload", ""); w.Code != 200 {
				t.Fatalf("reload b: %d %s", w.Code, w.Body)
			}
		} else if err := s.ReloadCollection(context.Background(), "b"); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d searches failed", n)
	}
	if len(a.engines) != 1 || a.engines[0].closed.Load() {
		t.Errorf("collection a: %d engines loaded, first closed %v; want its one engine open", len(a.engines), a.engines[0].closed.Load())
	}
	if len(b.engines) != reloads+1 {
		t.Fatalf("collection b: %d engines, want %d", len(b.engines), reloads+1)
	}
	for i, e := range b.engines {
		if e.closed.Load() != (i < reloads) || e.useAfter.Load() != 0 {
			t.Errorf("collection b engine %d: closed %v, used after close %d", i, e.closed.Load(), e.useAfter.Load())
		}
	}
	if err := s.ReloadCollection(context.Background(), "c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("reloading an unknown collection: %v, want ErrNotFound", err)
	}
}
