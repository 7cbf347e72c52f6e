package postings_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
	"github.com/kairos-rag/kairos/search"
)

// BenchmarkSearchSegmentSet measures query latency over a collection of KAIROS_BENCH_PASSAGES
// synthetic passages (default 300,000) cut into KAIROS_BENCH_SEGMENTS segments (default 4), as
// a flushed-and-merged build leaves them, one query at a time, with the searcher's workers at 1
// and at GOMAXPROCS (issue 28, item 3: one query over all cores). KAIROS_BENCH_SEGDIR keeps the
// segment files between runs (they are built once, then reopened), so that two versions of the
// search code can be compared back to back on the same files. With workers above 1 the
// cpu-p50/p99 figures count the calling thread only; the wall-clock ones are the latency:
//
//	KAIROS_BENCH_PASSAGES=1000000 KAIROS_BENCH_SEGDIR=/tmp/segs go test -run XXX \
//	    -bench SearchSegmentSet -benchtime 2000x -cpu 1,2 -timeout 30m ./internal/postings/
func BenchmarkSearchSegmentSet(b *testing.B) {
	n := envInt(b, "KAIROS_BENCH_PASSAGES", 300000)
	nseg := envInt(b, "KAIROS_BENCH_SEGMENTS", 4)
	dir := os.Getenv("KAIROS_BENCH_SEGDIR")
	if dir == "" {
		dir = b.TempDir()
	}
	an, err := langanalysis.New(manifest.Analyzer)
	if err != nil {
		b.Fatal(err)
	}
	var uni *unigrams
	segs := make([]*postings.Segment, nseg)
	var sc postings.Scoring
	for i := range segs {
		path := filepath.Join(dir, fmt.Sprintf("synthetic-%d-%dof%d.kpst", n, i+1, nseg))
		if _, err := os.Stat(path); err != nil {
			if uni == nil {
				uni = sciFactUnigrams(b, an)
			}
			bld, err := postings.NewBuilder(path, postings.BuilderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for key := i * n / nseg; key < (i+1)*n/nseg; key++ {
				if err := bld.Add(uint32(key), synthPassage(uni, 1, key)); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := bld.Finish(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		seg, err := postings.Open(path, postings.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { seg.Close() })
		segs[i] = seg
		sc.Docs += int64(seg.Len())
		sc.Tokens += seg.Tokens()
	}
	sc.K1, sc.B = search.BM25K1, search.BM25B
	tw := &twin{analyzer: an, scoring: sc}
	queries := sciFactQueries(b)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		x, err := postings.NewSearcher(segs, postings.SearcherOptions{Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		tw.searcher = x
		b.Run("workers-"+strconv.Itoa(workers), func(b *testing.B) {
			benchQueries(b, queries, func(text string) int { return len(tw.postingsHits(b, text, 10)) })
		})
		if runtime.GOMAXPROCS(0) == 1 {
			break
		}
	}
}
