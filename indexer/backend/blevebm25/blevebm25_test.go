package blevebm25

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

var passages = []corpus.Passage{
	{ID: "a#0", DocID: "a", Text: "Vitamin D | vitamin d deficiency and bone health", Source: "pubmed", Date: day("2001-05-01")},
	{ID: "b#0", DocID: "b", Text: "Vitamin C | vitamin c and the common cold", Source: "pubmed", Date: day("2010-01-01")},
	{ID: "c#0", DocID: "c", Text: "Bone | bone density in older adults", Source: "wiki"},
	{ID: "d#0", DocID: "d", Text: "Vitamin D | vitamin d from sunlight", Source: "wiki", Date: day("2005-06-01")},
}

// build writes passages into a new generation at dir, keys in order.
func build(t *testing.T, dir string, base *backend.Gen, add []corpus.Passage, first uint32, del ...uint32) backend.LexicalCommit {
	t.Helper()
	ctx := context.Background()
	w, err := Engine{}.Begin(ctx, backend.Gen{Name: "g", Dir: dir}, base, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	b := w.NewBatch()
	for i := range add {
		if err := b.Add(first+uint32(i), &add[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range del {
		b.Delete(k, nil) // bleve needs no text to delete
	}
	if err := w.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	c, err := w.Commit(ctx, backend.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keys(hits []backend.Hit) []uint32 {
	out := []uint32{}
	for _, h := range hits {
		out = append(out, h.Key)
	}
	return out
}

func TestSearchFiltersAndDerive(t *testing.T) {
	ctx := context.Background()
	g1 := t.TempDir()
	c := build(t, g1, nil, passages, 0)
	if c.Docs != 4 || c.TokensAdded == 0 {
		t.Fatalf("counts %+v", c)
	}
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}, Stats: backend.CollectionStats{Docs: c.Docs, Tokens: c.TokensAdded}}
	r, err := Open(g1, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := []struct {
		name   string
		filter backend.Filter
		want   []uint32
	}{
		{"no filter (the shorter passage first)", backend.Filter{}, []uint32{3, 0, 1}},
		{"source", backend.Filter{Sources: []string{"wiki"}}, []uint32{3}},
		{"date range", backend.Filter{DateFrom: day("2004-01-01"), DateTo: day("2009-12-31")}, []uint32{3}},
		{"undated fail a date filter", backend.Filter{DateTo: day("2020-01-01"), Sources: []string{"wiki"}}, []uint32{3}},
		{"nothing passes", backend.Filter{Sources: []string{"none"}}, []uint32{}},
		// bleve cannot hold a date outside 1677..2262; a bound there is still a bound.
		{"a lower bound before 1677", backend.Filter{DateFrom: day("1500-01-01")}, []uint32{3, 0, 1}},
		{"a lower bound just after the zero instant", backend.Filter{DateFrom: time.Time{}.Add(1)}, []uint32{3, 0, 1}},
		{"an upper bound before 1677", backend.Filter{DateTo: day("1500-01-01")}, []uint32{}},
		{"an upper bound after 2262", backend.Filter{DateFrom: day("2004-01-01"), DateTo: day("2300-01-01")}, []uint32{3, 1}},
		{"a lower bound after 2262", backend.Filter{DateFrom: day("2300-01-01")}, []uint32{}},
	}
	for _, tc := range tests {
		hits, err := r.Search(ctx, backend.LexicalQuery{Terms: []string{"vitamin", "d"}, N: 10, Filter: tc.filter})
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(hits); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.name, got, tc.want)
		}
	}
	has, err := r.Has(ctx, []uint32{0, 3, 4})
	if err != nil || !reflect.DeepEqual(has, []bool{true, true, false}) {
		t.Errorf("Has = %v %v", has, err)
	}

	// A derived generation deletes key 0 and adds key 4; the base is unchanged.
	g2 := t.TempDir()
	c2 := build(t, g2, &backend.Gen{Name: "g1", Dir: g1}, []corpus.Passage{{ID: "e#0", DocID: "e", Text: "Vitamin D | vitamin d in 2005"}}, 4, 0)
	if c2.Docs != 4 {
		t.Fatalf("derived: %d docs, want 4", c2.Docs)
	}
	r2, err := Open(g2, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if has, _ := r2.Has(ctx, []uint32{0, 4}); !reflect.DeepEqual(has, []bool{false, true}) {
		t.Errorf("derived Has(0, 4) = %v, want [false true]", has)
	}
	if has, _ := r.Has(ctx, []uint32{0, 4}); !reflect.DeepEqual(has, []bool{true, false}) {
		t.Errorf("base Has(0, 4) after the derive = %v, want [true false]", has)
	}
}

// TestParamsConflict: bleve keeps k1 and b per process; a reader asking for others is refused
// with ErrScoring, and zero parameters leave the process's alone.
func TestParamsConflict(t *testing.T) {
	g := t.TempDir()
	build(t, g, nil, passages[:1], 0)
	r, err := Open(g, backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r, err = Open(g, backend.Scoring{}); err != nil {
		t.Fatalf("zero parameters: %v", err)
	}
	r.Close()
	_, err = Open(g, backend.Scoring{Params: backend.BM25Params{K1: 0.9, B: 0.4}})
	if !errors.Is(err, backend.ErrScoring) {
		t.Fatalf("other k1: %v, want ErrScoring", err)
	}
	if _, err = Open(g, backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 1.5}}); !errors.Is(err, backend.ErrScoring) {
		t.Fatalf("b out of range: %v, want ErrScoring", err)
	}
}
