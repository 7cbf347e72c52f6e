package qdrant

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// BenchmarkSciFactBM25 measures, in one run, BM25 ingest (passages/s, lexical part only) and
// query latency (p50, p99 over 200 judged SciFact queries, top 10, one at a time) for the
// local bleve engine, a 1-peer and a 3-peer Qdrant cluster on loopback.
func BenchmarkSciFactBM25(b *testing.B) {
	ps := sciFact(b)
	queries := sciFactQueries(b)[:200]
	ctx := context.Background()
	measure := func(name string, lex backend.Lexical, gen backend.Gen, open func(sc backend.Scoring) (backend.LexicalReader, error)) {
		start := time.Now()
		c := writeLexical(b, lex, gen, ps)
		ingest := time.Since(start)
		r, err := open(backend.Scoring{Params: testParams, Stats: backend.CollectionStats{Docs: c.Docs, Tokens: c.TokensAdded}})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		lat := make([]time.Duration, len(queries))
		for i, q := range queries {
			t0 := time.Now()
			if _, err := r.Search(ctx, backend.LexicalQuery{Terms: q, N: 10}); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.Logf("%-8s ingest %d passages in %v: %.0f passages/s; query p50 %v p99 %v", name, len(ps), ingest.Round(time.Millisecond),
			float64(len(ps))/ingest.Seconds(), lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond))
	}
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		gen := backend.Gen{Name: "g-000001", Dir: dir}
		measure("local", blevebm25.Engine{}, gen, func(sc backend.Scoring) (backend.LexicalReader, error) {
			return blevebm25.Engine{}.Open(ctx, gen, sc, nil)
		})
		for _, peers := range []int{1, 3} {
			c := qdranttest.Start(b, peers)
			e := newEngine(b, c, "bench", Options{})
			measure(map[int]string{1: "1-peer", 3: "3-peer"}[peers], e.Lexical(), gen, func(sc backend.Scoring) (backend.LexicalReader, error) {
				return e.Lexical().Open(ctx, gen, sc, nil)
			})
		}
	}
}
