package qdrant

import (
	"context"
	"math"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// derive writes a generation derived from base: deletes, then additions under keys from
// first.
func derive(t *testing.T, lex backend.Lexical, gen, base backend.Gen, add []corpus.Passage, first uint32, del []uint32) backend.LexicalCommit {
	t.Helper()
	ctx := context.Background()
	w, err := lex.Begin(ctx, gen, &base, backend.LexicalBegin{Analyzer: "en"})
	if err != nil {
		t.Fatal(err)
	}
	b := w.NewBatch()
	for _, k := range del {
		b.Delete(k, nil) // qdrant needs no text to delete
	}
	for i := range add {
		if err := b.Add(first+uint32(i), &add[i]); err != nil {
			t.Fatal(err)
		}
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

// TestDerivedGeneration: a generation derived from a base (3000 SciFact passages, every 7th
// deleted, 1000 added; fewer under the race detector) ranks as the local engine's derived generation does, reweighted for its new average
// length, and leaves the base unchanged.
func TestDerivedGeneration(t *testing.T) {
	ctx := context.Background()
	all := sciFact(t)
	nb, na := 3000, 1000
	if raceEnabled {
		nb, na = 1000, 300
	}
	base, add := all[:nb], all[nb:nb+na]
	var del []uint32
	for k := uint32(0); k < uint32(nb); k += 7 {
		del = append(del, k)
	}
	// The live passages' total length, as the indexer's manifest records it.
	an, err := langanalysis.New("en")
	if err != nil {
		t.Fatal(err)
	}
	var tokens int64
	live := 0
	for i, p := range all[:nb+na] {
		if i < nb && i%7 == 0 {
			continue
		}
		tokens += int64(len(an.Analyze([]byte(p.Text))))
		live++
	}

	dir1, dir2 := t.TempDir(), t.TempDir()
	g1, g2 := backend.Gen{Name: "g-000001", Dir: dir1}, backend.Gen{Name: "g-000002", Dir: dir2}
	writeLexical(t, blevebm25.Engine{}, g1, base)
	lc := derive(t, blevebm25.Engine{}, g2, g1, add, uint32(nb), del)
	sc := backend.Scoring{Params: testParams, Stats: backend.CollectionStats{Docs: live, Tokens: tokens}}
	if lc.Docs != live {
		t.Fatalf("local derived: %d docs, want %d", lc.Docs, live)
	}
	local, err := blevebm25.Engine{}.Open(ctx, g2, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()

	c := qdranttest.Start(t, 1)
	e := newEngine(t, c, "derive", Options{})
	baseCounts := writeLexical(t, e.Lexical(), g1, base)
	qc := derive(t, e.Lexical(), g2, g1, add, uint32(nb), del)
	if qc.Docs != live || qc.TokensAdded != lc.TokensAdded {
		t.Fatalf("qdrant derived counts %+v, local %+v (live %d)", qc, lc, live)
	}
	r, err := e.Lexical().Open(ctx, g2, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	queries := sciFactQueries(t)
	for qi := 0; qi < len(queries); qi += 4 {
		q := backend.LexicalQuery{Terms: queries[qi], N: 10}
		want, err := local.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("query %d: %d hits, local %d", qi, len(got), len(want))
		}
		for i := range want {
			if got[i].Key != want[i].Key || math.Abs(got[i].Score-want[i].Score) > 1e-6*math.Abs(want[i].Score) {
				t.Fatalf("query %d rank %d: %+v, local %+v", qi, i, got[i], want[i])
			}
		}
	}
	// The base is unchanged: its own statistics, all its passages.
	if _, err := e.Lexical().Open(ctx, g1, backend.Scoring{Params: testParams, Stats: backend.CollectionStats{Docs: baseCounts.Docs, Tokens: baseCounts.TokensAdded}}, nil); err != nil {
		t.Fatalf("base after the derive: %v", err)
	}
	has, err := r.Has(ctx, []uint32{0, 1, uint32(nb)})
	if err != nil || has[0] || !has[1] || !has[2] {
		t.Fatalf("derived Has(0, 1, %d) = %v %v", nb, has, err)
	}
}
