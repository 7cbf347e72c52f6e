package postings

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestSearcherSplitsOnlyWhenIdle checks when a query takes more goroutines: only while the
// Searcher's budget has some free (a query held in flight by a filter that blocks uses it
// up), only for a query that reads at least MinSplitPostings postings, never with Workers
// 1; and that whatever it did, it returns the single-goroutine search's hits.
func TestSearcherSplitsOnlyWhenIdle(t *testing.T) {
	c := newZipfCorpus(8, 6000, 800)
	seg := c.build(t, tempPath(t, "s.kpst"), BuilderOptions{}, nil)
	sc := c.scoring()
	ctx := context.Background()
	frequent := Query{Terms: []string{zipfWord(2), zipfWord(3), zipfWord(9)}, K: 10}
	single, err := NewSearcher([]*Segment{seg}, SearcherOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := single.Search(ctx, frequent, sc)
	if err != nil || len(want) != frequent.K {
		t.Fatalf("single search: %d hits, %v", len(want), err)
	}
	tests := []struct {
		name    string
		opts    SearcherOptions
		hold    bool // another query of the Searcher is in flight, on every goroutine it could take
		helpers uint64
	}{
		{"idle", SearcherOptions{Workers: 2, MinRange: 1, MinSplitPostings: 1}, false, 1},
		{"idle, four workers", SearcherOptions{Workers: 4, MinRange: 1, MinSplitPostings: 1}, false, 3},
		{"busy", SearcherOptions{Workers: 2, MinRange: 1, MinSplitPostings: 1}, true, 0},
		{"busy, four workers", SearcherOptions{Workers: 4, MinRange: 1, MinSplitPostings: 1}, true, 0},
		{"few postings", SearcherOptions{Workers: 2, MinRange: 1, MinSplitPostings: 1 << 30}, false, 0},
		{"one worker", SearcherOptions{Workers: 1, MinRange: 1, MinSplitPostings: 1}, false, 0},
		{"segment below two ranges", SearcherOptions{Workers: 2, MinRange: 1 << 20, MinSplitPostings: 1}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := NewSearcher([]*Segment{seg}, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			release := func() {}
			var before SearcherStats
			if tt.hold {
				// A query whose filter blocks holds its goroutines until released: its caller
				// and every helper it took. It must have split (taking all it could), or the
				// budget would not be spent.
				entered, gate := make(chan struct{}), make(chan struct{})
				var once sync.Once
				held := frequent
				held.Allow = func(uint32) bool {
					once.Do(func() { close(entered) })
					<-gate
					return true
				}
				done := make(chan error, 1)
				go func() {
					_, err := x.Search(ctx, held, sc)
					done <- err
				}()
				<-entered
				release = func() {
					close(gate)
					if err := <-done; err != nil {
						t.Error(err)
					}
				}
				defer func() { release() }()
				before = x.Stats()
				if before.Split != 1 || before.Helpers != uint64(tt.opts.Workers-1) {
					t.Fatalf("the held query took %+v, want every spare worker", before)
				}
			}
			got, err := x.Search(ctx, frequent, sc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("hits differ from the single search:\n got %v\nwant %v", got, want)
			}
			st := x.Stats()
			if d := st.Helpers - before.Helpers; d != tt.helpers || (st.Split-before.Split == 1) != (tt.helpers > 0) {
				t.Fatalf("stats %+v (before %+v): the query took %d helpers, want %d", st, before, d, tt.helpers)
			}
			if tt.hold {
				release()
				release = func() {}
				// The budget is free again: the next query splits.
				if _, err := x.Search(ctx, frequent, sc); err != nil {
					t.Fatal(err)
				}
				if after := x.Stats(); after.Split != st.Split+1 {
					t.Fatalf("after the held query ended: stats %+v, want one more split", after)
				}
			}
			if b := x.busy.Load(); b != 0 {
				t.Fatalf("%d goroutines still counted busy after every query ended", b)
			}
		})
	}
}

// TestSearcherSplitErrors: a panic in any range, a helper's or the caller's, comes back as
// an error and stops the query; so does a cancelled context. The budget is given back.
func TestSearcherSplitErrors(t *testing.T) {
	c := newZipfCorpus(9, 6000, 800)
	seg := c.build(t, tempPath(t, "e.kpst"), BuilderOptions{}, nil)
	sc := c.scoring()
	x, err := NewSearcher([]*Segment{seg}, SearcherOptions{Workers: 4, MinRange: 1, MinSplitPostings: 1})
	if err != nil {
		t.Fatal(err)
	}
	base := Query{Terms: []string{zipfWord(2), zipfWord(5)}, K: 10}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		allow func(uint32) bool
		want  string
	}{
		{"panic in every range", context.Background(), func(uint32) bool { panic("filter broke") }, "search panicked: filter broke"},
		{"panic in the last range", context.Background(), func(k uint32) bool {
			if k > c.keys[len(c.keys)-100] {
				panic("late")
			}
			return true
		}, "search panicked: late"},
		{"cancelled", cancelled, nil, context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := base
			q.Allow = tt.allow
			before := x.Stats()
			hits, err := x.Search(tt.ctx, q, sc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %d hits, error %v; want an error with %q", len(hits), err, tt.want)
			}
			if tt.ctx == cancelled && !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v does not wrap context.Canceled", err)
			}
			if st := x.Stats(); st.Split != before.Split+1 {
				t.Fatalf("stats %+v, before %+v: the query did not split", st, before)
			}
			if b := x.busy.Load(); b != 0 {
				t.Fatalf("%d goroutines still counted busy", b)
			}
		})
	}
}
