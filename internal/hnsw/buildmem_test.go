package hnsw_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// BenchmarkBuildMemory builds 100,000 clustered 256-d vectors (the bench generator) in batches of
// 1,024, as the indexer adds them, and reports what the build costs in memory and what the
// graph gives back: Go heap per vector at the peak of the build (sampled every 5ms) and after it
// (after a GC, the build's input excluded), file bytes per vector, heap per vector of the file
// opened mapped (the serving index), build rate, and recall@10 against exact search at ef 256
// (500 queries, in-memory graph and mapped) and, where a worse graph shows, at ef 32. Run it with -benchtime=1x: one build is the
// measurement.
func BenchmarkBuildMemory(b *testing.B) {
	const n, dim, batch = 100000, 256, 1024
	ds := annbench.Generate(n, 500, dim, 11)
	gt, err := annbench.GroundTruth(context.Background(), ds, 0)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)
	}
	for _, mode := range []string{hnsw.BuildFloat, hnsw.BuildCodes} {
		b.Run("build="+mode, func(b *testing.B) {
			for b.Loop() {
				dir := b.TempDir()
				g, err := hnsw.New(dim, hnsw.Options{Seed: 1, Metric: hnsw.Dot, Build: mode, SpillDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				base := heapAfterGC()
				var peak atomic.Uint64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() { samplePeak(&peak, stop) })
				t0 := time.Now()
				for i := 0; i < n; i += batch {
					j := min(i+batch, n)
					if err := g.Add(context.Background(), keys[i:j], ds.Base[i:j]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := g.Repair(); err != nil {
					b.Fatal(err)
				}
				el := time.Since(t0).Seconds()
				close(stop)
				wg.Wait()
				after := heapAfterGC()
				path := filepath.Join(dir, "g.hnsw")
				if err := g.Save(path); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				rMem, _, err := annbench.Measure(g, ds.Queries, gt, 256)
				if err != nil {
					b.Fatal(err)
				}
				rMem32, _, err := annbench.Measure(g, ds.Queries, gt, 32)
				if err != nil {
					b.Fatal(err)
				}
				g.Close()
				m, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true})
				if err != nil {
					b.Fatal(err)
				}
				mapped := heapAfterGC()
				rMap, _, err := annbench.Measure(m, ds.Queries, gt, 256)
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
				per := func(x uint64, from uint64) float64 { return (float64(x) - float64(from)) / n }
				b.ReportMetric(per(max(peak.Load(), after), base), "peak-heap-B/vec")
				b.ReportMetric(per(after, base), "heap-B/vec")
				b.ReportMetric(float64(st.Size())/n, "file-B/vec")
				b.ReportMetric(per(mapped, base), "mapped-heap-B/vec")
				b.ReportMetric(n/el, "vec/s")
				b.ReportMetric(rMem, "recall@10")
				b.ReportMetric(rMem32, "recall@10-ef32")
				b.ReportMetric(rMap, "mapped-recall@10")
			}
		})
	}
}

// TestBuildCodesRecall compares recall@10 against exact search of a graph built from codes
// with one built from floats, on the same clustered data with one worker each: the code build
// must lose at most 0.01 at low ef, where a worse graph shows first. (The 100,000 x 256
// figures are BenchmarkBuildMemory's.)
func TestBuildCodesRecall(t *testing.T) {
	fl := newFixture(t, 6000, 200, 64, hnsw.Options{Seed: 5, Workers: 1})
	co := newFixture(t, 6000, 200, 64, hnsw.Options{Seed: 5, Workers: 1, Build: hnsw.BuildCodes, SpillDir: t.TempDir()})
	defer co.graph.Close()
	for _, ef := range []int{10, 16, 32} {
		f, c := fl.recall(t, 10, ef), co.recall(t, 10, ef)
		t.Logf("ef %d: recall@10 float build %.4f, code build %.4f", ef, f, c)
		if c < f-0.01 {
			t.Errorf("ef %d: code build recall@10 %.4f below float build %.4f - 0.01", ef, c, f)
		}
	}
}

// heapAfterGC is HeapAlloc after two collections: a graph's sync.Pool keeps it reachable
// (from the runtime's list of pools) until the second.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// samplePeak records the largest HeapAlloc seen until stop is closed.
func samplePeak(peak *atomic.Uint64, stop <-chan struct{}) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
		}
	}
}
