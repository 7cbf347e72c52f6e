package qdrant

import (
	"context"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// TestFilterThatMatchesNothing: on a real Qdrant, a Filter with None returns no hit from
// BM25, dense (HNSW and exact) and Hybrid's two lists, also when its other conditions pass
// every passage; an empty source list filters nothing; a source no passage has matches none.
func TestFilterThatMatchesNothing(t *testing.T) {
	ctx := context.Background()
	ps := sciFact(t)[:300]
	vecs := randomVectors(len(ps), 3)
	c := qdranttest.Start(t, 1)
	e := newEngine(t, c, "none", Options{Dim: testDim})
	gen := backend.Gen{Name: "g-000001"}
	writeGen(t, e, gen, ps, vecs)
	_, sc := localBM25(t, ps)
	lr, err := e.Lexical().Open(ctx, gen, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	vr, err := e.Vectors().Open(ctx, gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	terms := []string{"cell", "protein", "patient"}
	q := randomVectors(1, 4)[0]
	tests := []struct {
		name string
		f    backend.Filter
		none bool // no hit wanted; otherwise as many as without a filter
	}{
		{"no filter", backend.Filter{}, false},
		{"none", backend.Filter{None: true}, true},
		{"none with sources that pass all", backend.Filter{None: true, Sources: []string{"pubmed", "wiki", "news"}}, true},
		{"a source no passage has", backend.Filter{Sources: []string{"no-such-source"}}, true},
		{"empty source list", backend.Filter{Sources: []string{}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := func(what string, got []backend.Hit, all int) {
				t.Helper()
				if tc.none && len(got) != 0 || !tc.none && len(got) != all {
					t.Errorf("%s: %d hits (unfiltered %d)", what, len(got), all)
				}
			}
			lex, err := lr.Search(ctx, backend.LexicalQuery{Terms: terms, N: 10, Filter: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			want("bm25", lex, 10)
			for _, exact := range []bool{false, true} {
				dense, err := vr.Search(ctx, backend.VectorQuery{Vector: q, K: 10, Exact: exact, Filter: tc.f})
				if err != nil {
					t.Fatal(err)
				}
				want("dense", dense, 10)
			}
			h, err := lr.(*LexReader).hybrid(ctx, backend.LexicalQuery{Terms: terms, N: 10, Filter: tc.f},
				backend.VectorQuery{Vector: q, K: 10, Filter: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			want("hybrid bm25", h.Lexical, 10)
			want("hybrid dense", h.Dense, 10)
		})
	}
}
