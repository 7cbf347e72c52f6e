package qdrant

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// benchDim is all-MiniLM-L6-v2's; benchEf the candidate list both engines search with
// (recall@10 >= 0.99 against exact on Qdrant in TestClusterHNSWAndFaults).
const (
	benchDim = 384
	benchEf  = 128
)

// benchTarget is one engine set under measurement: the local engines or a Qdrant cluster.
type benchTarget struct {
	name string
	lex  backend.Lexical
	vec  backend.Vectors
	// indexed waits until the dense vectors are searchable by the graph (Qdrant indexes in
	// the background; the local graph is built by Add).
	indexed func() error
	openLex func(sc backend.Scoring) (backend.LexicalReader, error)
	openVec func() (backend.VectorReader, error)
	// hybrid runs one BM25 and one dense query for Kairos's fusion, and says how many
	// requests it took.
	hybrid func(lr backend.LexicalReader, vr backend.VectorReader, lq backend.LexicalQuery, vq backend.VectorQuery) (int, error)
}

// BenchmarkSciFact measures, in one run, for the local engines (bleve BM25 + Kairos's HNSW),
// a 1-peer and a 3-peer Qdrant cluster on loopback: ingest of SciFact's passages (lexical
// part, then the dense part with one clustered random 384-d vector per passage, then until
// Qdrant has indexed them with HNSW) and query latency p50/p99 over 200 judged SciFact
// queries, top 10, one at a time: BM25, dense (HNSW, ef 128) and hybrid (both lists: the
// local engines search one after the other, Qdrant answers both in one request).
func BenchmarkSciFact(b *testing.B) {
	ps := sciFact(b)
	queries := sciFactQueries(b)[:200]
	vecs := clustered(len(ps), benchDim, 100, 5)
	qvecs := clustered(len(queries), benchDim, 100, 6)
	ctx := context.Background()
	measure := func(t benchTarget, gen backend.Gen) {
		start := time.Now()
		c := writeLexical(b, t.lex, gen, ps)
		lexTime := time.Since(start)
		start = time.Now()
		w, err := t.vec.Begin(ctx, gen, benchDim, nil, backend.VectorBegin{})
		if err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < len(ps); lo += 500 {
			hi := min(lo+500, len(ps))
			if err := w.Add(ctx, seq(lo, hi), vecs[lo:hi]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx, backend.CommitOptions{}); err != nil {
			b.Fatal(err)
		}
		denseTime := time.Since(start)
		start = time.Now()
		if err := t.indexed(); err != nil {
			b.Fatal(err)
		}
		indexTime := time.Since(start)
		lr, err := t.openLex(backend.Scoring{Params: testParams, Stats: backend.CollectionStats{Docs: c.Docs, Tokens: c.TokensAdded}})
		if err != nil {
			b.Fatal(err)
		}
		defer lr.Close()
		vr, err := t.openVec()
		if err != nil {
			b.Fatal(err)
		}
		defer vr.Close()
		latency := func(run func(i int) error) string {
			lat := make([]time.Duration, len(queries))
			for i := range queries {
				t0 := time.Now()
				if err := run(i); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(t0)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			return fmt.Sprintf("p50 %v p99 %v", lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond))
		}
		lq := func(i int) backend.LexicalQuery { return backend.LexicalQuery{Terms: queries[i], N: 10} }
		vq := func(i int) backend.VectorQuery { return backend.VectorQuery{Vector: qvecs[i], K: 10, Ef: benchEf} }
		bm25 := latency(func(i int) error { _, err := lr.Search(ctx, lq(i)); return err })
		dense := latency(func(i int) error { _, err := vr.Search(ctx, vq(i)); return err })
		requests, single := 0, 0
		hybrid := latency(func(i int) error {
			n, err := t.hybrid(lr, vr, lq(i), vq(i))
			requests += n
			if n == 1 {
				single++
			}
			return err
		})
		total := lexTime + denseTime + indexTime
		n := float64(len(ps))
		b.Logf("%-7s ingest %d passages: lexical %v (%.0f/s), dense %v (%.0f/s), HNSW indexed %v later; all %.0f passages/s", t.name, len(ps),
			lexTime.Round(time.Millisecond), n/lexTime.Seconds(), denseTime.Round(time.Millisecond), n/denseTime.Seconds(), indexTime.Round(time.Millisecond), n/total.Seconds())
		b.Logf("%-7s query BM25 %s; dense %s; hybrid %s (%.2f requests a query, %d of %d in one)", t.name, bm25, dense, hybrid,
			float64(requests)/float64(len(queries)), single, len(queries))
	}
	for i := 0; i < b.N; i++ {
		gen := backend.Gen{Name: "g-000001", Dir: b.TempDir()}
		measure(benchTarget{
			name: "local", lex: blevebm25.Engine{}, vec: hnswvec.Engine{},
			indexed: func() error { return nil },
			openLex: func(sc backend.Scoring) (backend.LexicalReader, error) {
				return blevebm25.Engine{}.Open(ctx, gen, sc, nil)
			},
			openVec: func() (backend.VectorReader, error) { return hnswvec.Engine{}.Open(ctx, gen, nil) },
			hybrid: func(lr backend.LexicalReader, vr backend.VectorReader, lq backend.LexicalQuery, vq backend.VectorQuery) (int, error) {
				if _, err := lr.Search(ctx, lq); err != nil {
					return 1, err
				}
				_, err := vr.Search(ctx, vq)
				return 2, err
			},
		}, gen)
		for _, peers := range []int{1, 3} {
			c := qdranttest.Start(b, peers)
			// The graph threshold lowered so that SciFact's shards are indexed (see HNSW).
			e := newEngine(b, c, "bench", Options{Dim: benchDim, HNSW: HNSW{IndexingThresholdKB: 100}})
			measure(benchTarget{
				name: fmt.Sprintf("%d-peer", peers), lex: e.Lexical(), vec: e.Vectors(),
				indexed: func() error {
					ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
					defer cancel()
					_, err := e.waitIndexed(ctx, gen, 100*time.Millisecond)
					return err
				},
				openLex: func(sc backend.Scoring) (backend.LexicalReader, error) { return e.Lexical().Open(ctx, gen, sc, nil) },
				openVec: func() (backend.VectorReader, error) { return e.Vectors().Open(ctx, gen, nil) },
				hybrid: func(lr backend.LexicalReader, _ backend.VectorReader, lq backend.LexicalQuery, vq backend.VectorQuery) (int, error) {
					res, err := lr.(*LexReader).hybrid(ctx, lq, vq)
					return res.Requests, err
				},
			}, gen)
		}
	}
}
