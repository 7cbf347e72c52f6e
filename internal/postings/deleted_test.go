package postings

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/kairos-rag/kairos/internal/framing"
)

// TestDeletedDocFreqEqualsCleanSegment: segments from which passages are deleted, searched
// with the deleted passages' term counts (CountDeleted's) and the live passages' statistics,
// return exactly the hits and scores of a segment built of the live passages alone; the
// counts equal those of the deleted passages' text.
func TestDeletedDocFreqEqualsCleanSegment(t *testing.T) {
	const vocab = 2000
	c := newZipfCorpus(4, 5000, vocab)
	n := len(c.keys)
	var segs []*Segment
	for s := 0; s < 3; s++ {
		lo, hi := s*n/3, (s+1)*n/3
		segs = append(segs, c.build(t, tempPath(t, fmt.Sprintf("s%d.kpst", s)), BuilderOptions{MaxBufferedPostings: 4000},
			func(i int) bool { return i >= lo && i < hi }))
	}
	x, err := NewSearcher(segs, SearcherOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dead func(i int) bool // by passage index
	}{
		{"every 13th", func(i int) bool { return i%13 == 5 }},
		{"a run across blocks and a segment boundary", func(i int) bool { return i >= n/3-300 && i < n/3+400 }},
		{"most of the collection", func(i int) bool { return i%10 != 0 }},
		{"one passage", func(i int) bool { return i == 77 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deleted, want := keySet{}, map[string]int{}
			live := &zipfCorpus{}
			for i, k := range c.keys {
				if !tt.dead(i) {
					live.keys, live.docs = append(live.keys, k), append(live.docs, c.docs[i])
					continue
				}
				deleted[k] = true
				seen := map[string]bool{}
				for _, w := range c.docs[i] {
					if !seen[w] {
						seen[w] = true
						want[w]++
					}
				}
			}
			got := map[string]int{}
			for _, s := range segs {
				if err := s.CountDeleted(context.Background(), deleted, got); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("CountDeleted: %d terms, the deleted passages hold %d (or counts differ)", len(got), len(want))
			}
			counts := NewTermCounts(got)
			clean := live.build(t, tempPath(t, "clean.kpst"), BuilderOptions{}, nil)
			cx, err := NewSearcher([]*Segment{clean}, SearcherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sc := live.scoring()
			for qi, terms := range c.queries(int64(len(tt.name)), 150, 8, vocab) {
				for _, k := range []int{1, 10, 50} {
					wantHits, err := cx.Search(context.Background(), Query{Terms: terms, K: k}, sc)
					if err != nil {
						t.Fatal(err)
					}
					gotHits, err := x.Search(context.Background(), Query{Terms: terms, K: k, Deleted: deleted, DeletedDocFreq: counts.Get}, sc)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(gotHits, wantHits) {
						t.Fatalf("query %d %q k %d:\n  deleted from %v\n  clean        %v", qi, terms, k, gotHits, wantHits)
					}
				}
			}
		})
	}
}

// TestDeletedDocFreqRefusesMoreThanIndexed: counts that exceed a term's postings (counts of
// another index) fail the search instead of scoring with a wrapped-around frequency.
func TestDeletedDocFreqRefusesMoreThanIndexed(t *testing.T) {
	c := newZipfCorpus(5, 200, 100)
	x, err := NewSearcher([]*Segment{c.build(t, tempPath(t, "s.kpst"), BuilderOptions{}, nil)}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	counts := NewTermCounts(map[string]int{"w2": 1 << 20})
	_, err = x.Search(context.Background(), Query{Terms: []string{"w2"}, K: 3, DeletedDocFreq: counts.Get}, c.scoring())
	if err == nil {
		t.Fatal("a deleted count above the document frequency was accepted")
	}
}

func TestTermCountsRoundTrip(t *testing.T) {
	tests := []map[string]int{
		{},
		{"a": 1},
		{"b": 3, "a": 1, "ü": 1 << 31, "": 2, "zero": 0},
	}
	for _, m := range tests {
		c := NewTermCounts(m)
		got, err := ParseTermCounts(c.Encode())
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if !got.Equal(c) {
			t.Fatalf("%v: round trip gave %v", m, got.Map())
		}
		counted := 0
		for term, n := range m {
			if got.Get(term) != n {
				t.Errorf("Get(%q) = %d, want %d", term, got.Get(term), n)
			}
			if n > 0 {
				counted++
			}
		}
		if got.Get("absent") != 0 || got.Len() != counted {
			t.Errorf("%v: Get(absent) %d, Len %d, want 0 and %d", m, got.Get("absent"), got.Len(), counted)
		}
	}
	b := NewTermCounts(map[string]int{"x": 2}).Encode()
	b[10] ^= 1
	if _, err := ParseTermCounts(b); !errors.Is(err, framing.ErrFormat) {
		t.Errorf("damaged file: %v, want ErrFormat", err)
	}
}

// FuzzParseTermCounts: a damaged counts file is an error, never a panic, and what parses
// re-encodes to the same bytes.
func FuzzParseTermCounts(f *testing.F) {
	f.Add(NewTermCounts(map[string]int{"alpha": 3, "beta": 1}).Encode())
	f.Add(NewTermCounts(nil).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseTermCounts(b)
		if err != nil {
			return
		}
		if again := c.Encode(); string(again) != string(b) {
			t.Fatalf("re-encoded %x, parsed %x", again, b)
		}
	})
}
