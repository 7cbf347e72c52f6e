package postings

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"
)

// TestRangesEqualExhaustive searches one segment and a set of shards cut into ordinal ranges
// searched in parallel (and, with one worker, in turn) under one shared threshold: every query,
// filtered or not, must return exactly the exhaustive ranking. Duplicated passages (the corpus
// copies one in twenty) make exact ties across ranges, which the threshold must not prune.
func TestRangesEqualExhaustive(t *testing.T) {
	const vocab = 3000
	c := newZipfCorpus(5, 8000, vocab)
	sc := c.scoring()
	single := c.build(t, tempPath(t, "all.kpst"), BuilderOptions{}, nil)
	var shards []*Segment
	for s := 0; s < 3; s++ {
		lo, hi := s*len(c.keys)/3, (s+1)*len(c.keys)/3
		shards = append(shards, c.build(t, tempPath(t, fmt.Sprintf("s%d.kpst", s)), BuilderOptions{},
			func(i int) bool { return i >= lo && i < hi }))
	}
	deleted := keySet{}
	for i := 0; i < len(c.keys); i += 11 {
		deleted[c.keys[i]] = true
	}
	odd := func(k uint32) bool { return k%2 == 1 }
	type probe struct {
		q    Query
		want []Hit
	}
	var probes []probe // the exhaustive rankings, computed once for every searcher below
	for _, k := range []int{1, 10, 100} {
		for qi, terms := range c.queries(int64(k), 100, 8, vocab) {
			q := Query{Terms: terms, K: k}
			switch qi % 4 {
			case 1:
				q.Allow = odd
			case 2:
				q.Deleted = deleted
			}
			probes = append(probes, probe{q, c.exhaustive(q, sc)})
		}
	}
	for _, set := range []struct {
		name string
		segs []*Segment
	}{{"one segment", []*Segment{single}}, {"three shards", shards}} {
		for _, opts := range []SearcherOptions{{Workers: 1}, {Workers: 2, MinRange: 1, MinSplitPostings: 1}, {Workers: 3, MinRange: 700, MinSplitPostings: 1}, {Workers: 8, MinRange: 1, MinSplitPostings: 1}} {
			t.Run(fmt.Sprintf("%s/workers %d range %d", set.name, opts.Workers, opts.MinRange), func(t *testing.T) {
				x, err := NewSearcher(set.segs, opts)
				if err != nil {
					t.Fatal(err)
				}
				for i, pr := range probes {
					got, err := x.Search(context.Background(), pr.q, sc)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, pr.want) {
						t.Fatalf("query %d %q k %d:\n got %v\nwant %v", i, pr.q.Terms, pr.q.K, got, pr.want)
					}
				}
			})
		}
	}
}

// TestRangesTileSegments checks the cut into as many parts as a query has goroutines (here
// Workers): about that many ranges in proportion to segment sizes,
// none below MinRange passages, covering every ordinal once.
func TestRangesTileSegments(t *testing.T) {
	c := newZipfCorpus(6, 3000, 500)
	a := c.build(t, tempPath(t, "a.kpst"), BuilderOptions{}, func(i int) bool { return i < 2000 })
	b := c.build(t, tempPath(t, "b.kpst"), BuilderOptions{}, func(i int) bool { return i >= 2000 })
	p := newPlan(c.scoring(), []string{zipfWord(2)}, []uint64{1})
	tests := []struct {
		workers, minRange int
		want              []int // ranges per segment
	}{
		{1, 1, []int{1, 1}},
		{3, 1, []int{2, 1}},
		{6, 1, []int{4, 2}},
		{6, 800, []int{2, 1}},
		{2, 5000, []int{1, 1}},
	}
	for _, tt := range tests {
		x, err := NewSearcher([]*Segment{a, b}, SearcherOptions{Workers: tt.workers, MinRange: tt.minRange})
		if err != nil {
			t.Fatal(err)
		}
		sps, _, err := x.plan(p)
		if err != nil {
			t.Fatal(err)
		}
		tasks := x.cut(sps, tt.workers)
		var got []int
		next := map[*Segment]uint32{}
		for _, tk := range tasks {
			s := tk.sp.seg
			if tk.lo != next[s] || tk.hi <= tk.lo {
				t.Fatalf("workers %d: range [%d, %d) of %s does not follow %d", tt.workers, tk.lo, tk.hi, s.Path(), next[s])
			}
			if tk.lo == 0 {
				got = append(got, 0)
			}
			got[len(got)-1]++
			if tk.hi != exhausted && int(tk.hi-tk.lo) < tt.minRange {
				t.Fatalf("workers %d: range [%d, %d) below %d passages", tt.workers, tk.lo, tk.hi, tt.minRange)
			}
			next[s] = tk.hi
		}
		for s, end := range next {
			if end != exhausted {
				t.Fatalf("workers %d: %s's last range ends at %d", tt.workers, s.Path(), end)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("workers %d, min range %d: ranges per segment %v, want %v", tt.workers, tt.minRange, got, tt.want)
		}
	}
}

// TestCursorAt checks newCursorAt against a walk from the first posting, at every block
// boundary and at random ordinals.
func TestCursorAt(t *testing.T) {
	c := newZipfCorpus(7, 5000, 200)
	seg := c.build(t, tempPath(t, "c.kpst"), BuilderOptions{}, nil)
	r := rand.New(rand.NewSource(1))
	for _, w := range []string{zipfWord(1), zipfWord(2), zipfWord(30), zipfWord(150)} {
		ti, ok, err := seg.lookup(w)
		if err != nil || !ok {
			t.Fatalf("lookup %s: %v %v", w, ok, err)
		}
		var ords []uint32
		for cur := newCursor(seg, ti); cur.cur != exhausted; cur.next() {
			ords = append(ords, cur.cur)
		}
		targets := []uint32{0, 1, ords[len(ords)-1], ords[len(ords)-1] + 1, uint32(seg.Len())}
		for i := 0; i < len(ords); i += BlockSize {
			targets = append(targets, ords[i], ords[i]+1, ords[min(i+BlockSize, len(ords))-1])
		}
		for range 200 {
			targets = append(targets, uint32(r.Intn(seg.Len())))
		}
		for _, lo := range targets {
			want := uint32(exhausted)
			for _, o := range ords {
				if o >= lo {
					want = o
					break
				}
			}
			cur := newCursorAt(seg, ti, lo)
			if cur.cur != want || cur.err != nil {
				t.Fatalf("%s at %d: cursor at %d (err %v), want %d", w, lo, cur.cur, cur.err, want)
			}
			if want != exhausted {
				// the cursor goes on as one that walked there
				cur.next()
				k := 0
				for ords[k] != want {
					k++
				}
				if k+1 < len(ords) && cur.cur != ords[k+1] || k+1 == len(ords) && cur.cur != exhausted {
					t.Fatalf("%s at %d: next is %d", w, lo, cur.cur)
				}
			}
		}
	}
}

// TestThresholdRaise raises one threshold from many goroutines: it ends at the largest value
// and never goes down.
func TestThresholdRaise(t *testing.T) {
	var th threshold
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			last := 0.0
			for range 2000 {
				th.raise(r.Float64() * 100)
				v := th.load()
				if v < last {
					t.Errorf("threshold went down from %v to %v", last, v)
					return
				}
				last = v
			}
		}()
	}
	th.raise(1000)
	wg.Wait()
	if th.load() != 1000 {
		t.Fatalf("threshold %v, want 1000", th.load())
	}
}
