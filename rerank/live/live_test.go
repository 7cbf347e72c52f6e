package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// fakeEngine answers every query with one passage naming its generation, and records
// misuse: a search after Close, a second Close.
type fakeEngine struct {
	gen      int
	caps     Capabilities
	dense    bool // the index has vectors (Stats().Dense)
	closed   atomic.Int64
	useAfter atomic.Int64
	// entered and hold, when set, make Search signal its start and wait.
	entered, hold chan struct{}
	lastMode      atomic.Value // search.Mode of the last query
}

func (e *fakeEngine) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	if e.closed.Load() != 0 {
		e.useAfter.Add(1)
		return rerank.Result{}, errors.New("search on a closed engine")
	}
	if e.hold != nil {
		e.entered <- struct{}{}
		<-e.hold
	}
	e.lastMode.Store(q.Mode)
	p := corpus.Passage{ID: fmt.Sprintf("g%d#0", e.gen)}
	return rerank.Result{Hits: []rerank.Hit{{Hit: search.Hit{Passage: p, Rank: 1}}}}, nil
}

func (e *fakeEngine) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	return corpus.Passage{}, fmt.Errorf("passage %q: %w", id, search.ErrNotFound)
}

func (e *fakeEngine) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	return make([]int, len(words)), e.gen, nil
}

func (e *fakeEngine) Stats() search.Stats {
	return search.Stats{Generation: e.gen, Passages: 1, Dense: e.dense}
}
func (e *fakeEngine) Capabilities() Capabilities { return e.caps }

func (e *fakeEngine) Close() error {
	if e.closed.Add(1) != 1 {
		return errors.New("closed twice")
	}
	return nil
}

// fakeOpener opens a new fakeEngine of the next generation at each call, or fails with fail.
type fakeOpener struct {
	mu      sync.Mutex
	engines []*fakeEngine
	caps    Capabilities
	fail    error
	panics  bool
}

func (o *fakeOpener) open(ctx context.Context) (Engine, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.panics {
		panic("damaged file")
	}
	if o.fail != nil {
		return nil, o.fail
	}
	e := &fakeEngine{gen: len(o.engines) + 1, caps: o.caps, dense: o.caps.Dense}
	o.engines = append(o.engines, e)
	return e, nil
}

func (o *fakeOpener) all() []*fakeEngine {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*fakeEngine(nil), o.engines...)
}

// TestReloadUnderLoad searches from several goroutines while the index is reloaded over and
// over; run it with -race. No search may fail or reach a closed engine, and every engine but
// the current one ends up closed exactly once.
func TestReloadUnderLoad(t *testing.T) {
	o := &fakeOpener{}
	ix := New(o.open, Options{})
	if err := ix.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	var (
		stop     atomic.Bool
		searches atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				res, err := ix.Search(t.Context(), rerank.Query{Request: search.Request{Text: "q", K: 1}})
				if err != nil || len(res.Hits) != 1 {
					failures.Add(1)
				}
				searches.Add(1)
			}
		})
	}
	reloads := 0
	for i := 0; i < 50 || searches.Load() < 500 && i < 5000; i++ {
		if err := ix.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		reloads++
	}
	stop.Store(true)
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d of %d searches failed during %d reloads", n, searches.Load(), reloads)
	}
	engines := o.all()
	if len(engines) != reloads+1 {
		t.Fatalf("%d engines opened, want %d", len(engines), reloads+1)
	}
	for i, e := range engines {
		if want := int64(0); i < reloads {
			want = 1
			if e.closed.Load() != want {
				t.Errorf("engine %d closed %d times, want %d", i, e.closed.Load(), want)
			}
		} else if e.closed.Load() != 0 {
			t.Errorf("the current engine is closed")
		}
		if n := e.useAfter.Load(); n != 0 {
			t.Errorf("engine %d searched %d times after Close", i, n)
		}
	}
	l := ix.Acquire()
	defer l.Release()
	if l.Stats().Generation != reloads+1 || l.Reloads() != uint64(reloads) {
		t.Errorf("current load: generation %d, reloads %d; want %d and %d", l.Stats().Generation, l.Reloads(), reloads+1, reloads)
	}
	t.Logf("%d searches, %d reloads", searches.Load(), reloads)
}

// TestReloadWaitsForInFlight holds a search inside the engine, reloads, and checks that the
// old engine is closed only once that search has finished, which succeeds on it.
func TestReloadWaitsForInFlight(t *testing.T) {
	o := &fakeOpener{}
	ix := New(o.open, Options{})
	if err := ix.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := o.all()[0]
	old.entered, old.hold = make(chan struct{}), make(chan struct{})
	done := make(chan string)
	go func() {
		res, err := ix.Search(context.Background(), rerank.Query{Request: search.Request{Text: "q", K: 1}})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- res.Hits[0].ID
	}()
	<-old.entered
	if err := ix.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if old.closed.Load() != 0 {
		t.Fatal("old engine closed while a search was still running on it")
	}
	if res, err := ix.Search(t.Context(), rerank.Query{Request: search.Request{Text: "q", K: 1}}); err != nil || res.Hits[0].ID != "g2#0" {
		t.Fatalf("search after the reload: %v %v, want the new generation's g2#0", res.Hits, err)
	}
	close(old.hold)
	if got := <-done; got != "g1#0" {
		t.Fatalf("the search in flight got %q, want g1#0 (the load it started on)", got)
	}
	if old.closed.Load() != 1 {
		t.Error("old engine still open after its last search")
	}
}

// TestReloadFailures: a first load that fails leaves nothing loaded (ErrNotLoaded); a reload
// that fails, or panics, keeps the current load serving; Close ends both.
func TestReloadFailures(t *testing.T) {
	o := &fakeOpener{fail: errors.New("manifest.json: checksum mismatch")}
	ix := New(o.open, Options{})
	q := rerank.Query{Request: search.Request{Text: "q", K: 1}}
	if err := ix.Reload(t.Context()); err == nil || err.Error() != "loading index: manifest.json: checksum mismatch" {
		t.Fatalf("first load: %v", err)
	}
	if _, err := ix.Search(t.Context(), q); !errors.Is(err, ErrNotLoaded) {
		t.Fatalf("search before any load: %v, want ErrNotLoaded", err)
	}
	if ix.Acquire() != nil {
		t.Fatal("Acquire before any load returned a load")
	}
	o.fail = nil
	if err := ix.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	o.fail = errors.New("manifest.json: checksum mismatch")
	if err := ix.Reload(t.Context()); err == nil || err.Error() != "reloading index: manifest.json: checksum mismatch" {
		t.Fatalf("failed reload: %v", err)
	}
	o.fail, o.panics = nil, true
	if err := ix.Reload(t.Context()); err == nil || !strings.Contains(err.Error(), "reloading index: opening the index panicked: damaged file") {
		t.Fatalf("panicking reload: %v", err)
	}
	if res, err := ix.Search(t.Context(), q); err != nil || res.Hits[0].ID != "g1#0" {
		t.Fatalf("after the failed reloads: %v %v, want the first load serving", res.Hits, err)
	}
	if st, err := ix.Stats(); err != nil || st.Generation != 1 {
		t.Fatalf("stats after the failed reloads: %+v %v", st, err)
	}
	ix.Close()
	if o.all()[0].closed.Load() != 1 {
		t.Error("Close left the engine open")
	}
	if _, err := ix.Search(t.Context(), q); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("search after Close: %v, want ErrNotLoaded", err)
	}
	o.panics = false
	if err := ix.Reload(t.Context()); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("reload after Close: %v", err)
	}
}

// TestQueriesAgainstCapabilities: the default mode follows what the load can serve, and a
// query asking for more is refused with a typed error naming the flag that would serve it,
// before the engine sees it.
func TestQueriesAgainstCapabilities(t *testing.T) {
	crossTime := []rerank.Stage{rerank.StageCross, rerank.StageTime}
	tests := []struct {
		name     string
		caps     Capabilities
		vectors  bool // the index has vectors without an encoder to search them
		mode     search.Mode
		rerank   []rerank.Stage
		time     timex.Spec
		want     error       // nil: served
		wantMode search.Mode // the mode the engine ran, when served
		msg      string      // in the refusal
	}{
		{"bm25 index, no mode", Capabilities{}, false, "", nil, timex.Spec{}, nil, search.ModeBM25, ""},
		{"bm25 index, bm25", Capabilities{}, false, search.ModeBM25, nil, timex.Spec{}, nil, search.ModeBM25, ""},
		{"bm25 index, hybrid", Capabilities{}, false, search.ModeHybrid, nil, timex.Spec{}, ErrUnsupportedMode, "", "kairos index --model"},
		{"vectors without encoder, no mode", Capabilities{}, true, "", nil, timex.Spec{}, nil, search.ModeBM25, ""},
		{"vectors without encoder, dense", Capabilities{}, true, search.ModeDense, nil, timex.Spec{}, ErrUnsupportedMode, "", "--model DIR"},
		{"dense, no mode", Capabilities{Dense: true}, true, "", nil, timex.Spec{}, nil, search.ModeHybrid, ""},
		{"dense, dense", Capabilities{Dense: true}, true, search.ModeDense, nil, timex.Spec{}, nil, search.ModeDense, ""},
		{"no cross-encoder, cross", Capabilities{}, false, "", crossTime, timex.Spec{}, ErrUnsupportedStage, "", "--cross-model"},
		{"no cross-encoder, time", Capabilities{}, false, "", []rerank.Stage{rerank.StageTime}, timex.Spec{}, nil, search.ModeBM25, ""},
		{"cross-encoder, cross", Capabilities{Cross: true}, false, "", crossTime, timex.Spec{}, nil, search.ModeBM25, ""},
		{"reversed time range", Capabilities{}, false, "", nil, timex.Spec{Kind: timex.KindRange, From: 2000, To: 1990}, ErrInvalidQuery, "", "reversed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e *fakeEngine
			ix := New(func(context.Context) (Engine, error) {
				e = &fakeEngine{gen: 1, caps: tc.caps, dense: tc.vectors}
				return e, nil
			}, Options{})
			if err := ix.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			q := rerank.Query{Request: search.Request{Text: "q", K: 1, Mode: tc.mode}, Rerank: tc.rerank, Time: tc.time}
			_, err := ix.Search(t.Context(), q)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got := e.lastMode.Load(); got != tc.wantMode {
					t.Errorf("the engine ran mode %v, want %s", got, tc.wantMode)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Fatalf("got %v, want an error wrapping %q that says %q", err, tc.want, tc.msg)
			}
			if tc.want != ErrInvalidQuery && !errors.Is(err, ErrUnsupported) {
				t.Errorf("%v does not wrap ErrUnsupported", err)
			}
			if e.lastMode.Load() != nil {
				t.Error("the engine saw a query that was refused")
			}
		})
	}
}
