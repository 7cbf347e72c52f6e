package postings_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// BenchmarkSearchIndex measures the lexical engine of a built index (KAIROS_BENCH_INDEX, a
// kairos index directory, such as the ones `kairos bench scale --keep --work DIR` leaves)
// on the queries of KAIROS_BENCH_QUERIES (a JSONL file of query strings, as bench scale
// writes queries.jsonl), one at a time on one locked thread with GOMAXPROCS 1, as bench scale
// times them, but without the rest of a search (document evidence, passages): the postings
// engine alone, whose thread-CPU percentiles compare on a loaded machine. k is
// KAIROS_BENCH_K (default 30, the default search's window). It also prints a digest of every
// hit's key and score bits: two versions of the engine that print the same digest rank
// every query identically, to the bit. KAIROS_BENCH_PROCS sets GOMAXPROCS (default 1): above
// 1 the searcher may split a query over idle cores, and the thread-CPU figures count the
// calling thread alone; the wall-clock ones (mean-ms, p50-ms, p99-ms) are the latency a
// caller sees.
//
//	KAIROS_BENCH_INDEX=/tmp/w/n1000000/index KAIROS_BENCH_QUERIES=/tmp/w/queries.jsonl \
//	    go test -run XXX -bench SearchIndex -benchtime 2000x -cpuprofile cpu.out ./internal/postings/
func BenchmarkSearchIndex(b *testing.B) {
	dir, qpath := os.Getenv("KAIROS_BENCH_INDEX"), os.Getenv("KAIROS_BENCH_QUERIES")
	if dir == "" || qpath == "" {
		b.Skip("KAIROS_BENCH_INDEX and KAIROS_BENCH_QUERIES name a built index and its queries")
	}
	k := envInt(b, "KAIROS_BENCH_K", 30)
	ctx := context.Background()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(envInt(b, "KAIROS_BENCH_PROCS", 1)))
	ix, err := indexer.Open(ctx, indexer.Location{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	gen, err := ix.Reader(ctx, indexer.ReadOptions{BM25: backend.BM25Params{K1: 1.2, B: 0.4}})
	if err != nil {
		b.Fatal(err)
	}
	defer gen.Close()
	an, err := gen.Manifest.PassageAnalysis()
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(qpath)
	if err != nil {
		b.Fatal(err)
	}
	var queries [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q string
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatalf("%s: %v", qpath, err)
		}
		terms, err := an.QueryTerms(q, gen.Manifest.IndexLanguages())
		if err != nil {
			b.Fatal(err)
		}
		if len(terms) > 0 {
			queries = append(queries, terms)
		}
	}
	f.Close()
	if len(queries) == 0 {
		b.Fatalf("%s: no query", qpath)
	}
	search := func(terms []string) []backend.Hit {
		hits, err := gen.Lexical.Search(ctx, backend.LexicalQuery{Terms: terms, N: k})
		if err != nil {
			b.Fatal(err)
		}
		return hits
	}
	// The digest of one pass over the queries, untimed (it also warms the page cache).
	h := sha256.New()
	for _, q := range queries {
		for _, hit := range search(q) {
			var rec [12]byte
			binary.LittleEndian.PutUint32(rec[:], hit.Key)
			binary.LittleEndian.PutUint64(rec[4:], math.Float64bits(hit.Score))
			h.Write(rec[:])
		}
	}
	fmt.Printf("BenchmarkSearchIndex: %d queries, k %d, digest %x\n", len(queries), k, h.Sum(nil)[:8])
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wall := make(latencies, 0, b.N)
	cpu := make(latencies, 0, b.N)
	var cpuSum, wallSum time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, startCPU := time.Now(), threadCPU()
		search(queries[i%len(queries)])
		c := threadCPU() - startCPU
		cpu = append(cpu, c)
		cpuSum += c
		w := time.Since(start)
		wall = append(wall, w)
		wallSum += w
	}
	b.StopTimer()
	wall.report(b, "")
	cpu.report(b, "cpu-")
	b.ReportMetric(float64(wallSum)/float64(b.N)/1e6, "mean-ms")
	b.ReportMetric(float64(cpuSum)/float64(b.N)/1e6, "cpu-mean-ms")
}
