package postings

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

type keySet map[uint32]bool

func (s keySet) Has(k uint32) bool { return s[k] }

func TestSearchEqualsExhaustive(t *testing.T) {
	const vocab = 3000
	c := newZipfCorpus(1, 6000, vocab)
	sc := c.scoring()
	// A buffer of 5,000 postings spills dozens of runs: the merge is exercised, not just
	// the in-memory path.
	seg := c.build(t, tempPath(t, "one.kpst"), BuilderOptions{MaxBufferedPostings: 5000}, nil)
	if err := seg.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	x, err := NewSearcher([]*Segment{seg}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same segment with inner windows of 64 ordinals: the 6,000 passages span about a
	// hundred windows, so the partition of the terms, the skipped windows and the threshold
	// rising between windows are exercised, not just the first window.
	small, err := NewSearcher([]*Segment{seg}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	small.window = 64
	deleted := keySet{}
	for i := 0; i < len(c.keys); i += 7 {
		deleted[c.keys[i]] = true
	}
	odd := func(k uint32) bool { return k%2 == 1 }
	tests := []struct {
		name     string
		k        int
		maxTerms int
		queries  int
		allow    func(uint32) bool
		deleted  KeySet
	}{
		{"k1", 1, 4, 150, nil, nil},
		{"k10", 10, 6, 150, nil, nil},
		{"k100", 100, 6, 150, nil, nil},
		{"long queries (heap order in bleve)", 10, 16, 150, nil, nil},
		{"more terms than an accumulator's mask (one more word a passage)", 10, 40, 40, nil, nil},
		{"more than 96 terms (two more words a passage)", 10, 100, 20, nil, nil},
		{"filter", 10, 6, 150, odd, nil},
		{"tombstones", 10, 6, 150, nil, deleted},
		{"filter and tombstones", 20, 8, 150, odd, deleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for qi, terms := range c.queries(int64(tt.k*100+tt.maxTerms), tt.queries, tt.maxTerms, vocab) {
				q := Query{Terms: terms, K: tt.k, Allow: tt.allow, Deleted: tt.deleted}
				want := c.exhaustive(q, sc)
				for _, s := range []*Searcher{x, small} {
					got, err := s.Search(context.Background(), q, sc)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("window %d, query %d %q:\n got %v\nwant %v", s.window, qi, terms, got, want)
					}
					for _, h := range got {
						if (tt.allow != nil && !tt.allow(h.Key)) || (tt.deleted != nil && tt.deleted.Has(h.Key)) {
							t.Fatalf("query %d: hit %d should have been filtered", qi, h.Key)
						}
					}
				}
			}
		})
	}
}

// TestShardsEqualSingleSegment splits the collection over several segments, searched in
// parallel with the collection's statistics: every query must return exactly the single
// segment's hits.
func TestShardsEqualSingleSegment(t *testing.T) {
	const vocab = 2000
	c := newZipfCorpus(2, 4000, vocab)
	sc := c.scoring()
	single := c.build(t, tempPath(t, "all.kpst"), BuilderOptions{}, nil)
	one, err := NewSearcher([]*Segment{single}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, shards := range []int{2, 3, 7} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			var segs []*Segment
			for s := 0; s < shards; s++ {
				// contiguous key ranges, as parallel builds of consecutive batches make
				lo, hi := s*len(c.keys)/shards, (s+1)*len(c.keys)/shards
				segs = append(segs, c.build(t, tempPath(t, fmt.Sprintf("s%d.kpst", s)), BuilderOptions{MaxBufferedPostings: 3000},
					func(i int) bool { return i >= lo && i < hi }))
			}
			many, err := NewSearcher(segs, SearcherOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			for qi, terms := range c.queries(int64(shards), 200, 8, vocab) {
				q := Query{Terms: terms, K: 10}
				want, err := one.Search(context.Background(), q, sc)
				if err != nil {
					t.Fatal(err)
				}
				got, err := many.Search(context.Background(), q, sc)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("query %d %q:\n%d shards %v\n  single %v", qi, terms, shards, got, want)
				}
			}
		})
	}
}

func TestSegmentTables(t *testing.T) {
	c := newZipfCorpus(3, 500, 300)
	seg := c.build(t, tempPath(t, "t.kpst"), BuilderOptions{MaxBufferedPostings: 100}, nil)
	if seg.Len() != len(c.keys) {
		t.Fatalf("Len %d, want %d", seg.Len(), len(c.keys))
	}
	var tokens int64
	df := map[string]int{}
	for i, d := range c.docs {
		tokens += int64(len(d))
		n, ok := seg.Length(c.keys[i])
		if !ok || n != len(d) {
			t.Fatalf("Length(%d) = %d, %v; want %d", c.keys[i], n, ok, len(d))
		}
		seen := map[string]bool{}
		for _, w := range d {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	if seg.Tokens() != tokens || seg.Terms() != len(df) {
		t.Fatalf("Tokens %d Terms %d, want %d %d", seg.Tokens(), seg.Terms(), tokens, len(df))
	}
	for w, n := range df {
		got, err := seg.DocFreq(w)
		if err != nil || got != n {
			t.Fatalf("DocFreq(%q) = %d, %v; want %d", w, got, err, n)
		}
	}
	if n, err := seg.DocFreq("absent"); n != 0 || err != nil {
		t.Fatalf("DocFreq(absent) = %d, %v", n, err)
	}
	if _, ok := seg.Length(c.keys[len(c.keys)-1] + 1); ok {
		t.Fatal("Length of a key past the last one reported found")
	}
}

func TestBadInput(t *testing.T) {
	b, err := NewBuilder(tempPath(t, "bad.kpst"), BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	if err := b.Add(5, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(5, []string{"b"}); err == nil {
		t.Fatal("a repeated key was accepted")
	}
	seg := newZipfCorpus(4, 50, 40).build(t, tempPath(t, "q.kpst"), BuilderOptions{}, nil)
	x, _ := NewSearcher([]*Segment{seg}, SearcherOptions{})
	good := Scoring{K1: 1.2, B: 0.4, Docs: 10, Tokens: 100}
	for _, tc := range []struct {
		name string
		q    Query
		sc   Scoring
	}{
		{"k 0", Query{Terms: []string{"w1"}}, good},
		{"repeated term", Query{Terms: []string{"w1", "w1"}, K: 3}, good},
		{"b above 1", Query{Terms: []string{"w1"}, K: 3}, Scoring{K1: 1.2, B: 1.5, Docs: 10, Tokens: 100}},
		{"no passages", Query{Terms: []string{"w1"}, K: 3}, Scoring{K1: 1.2, B: 0.4}},
	} {
		if _, err := x.Search(context.Background(), tc.q, tc.sc); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
