package hnsw_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// TestParallelBuildRecall builds the same data with one worker and with four (striped list locks,
// hnsw's insert.go) and compares recall@10 against exact search at a low and a usual ef: the
// parallel graph must be as good as the sequential one within noise (0.01). A low ef is where
// a worse graph shows first.
func TestParallelBuildRecall(t *testing.T) {
	seq := newFixture(t, 8000, 300, 64, hnsw.Options{Seed: 4, Workers: 1})
	par := newFixture(t, 8000, 300, 64, hnsw.Options{Seed: 4, Workers: 4})
	for _, ef := range []int{10, 16, 32} {
		s, p := seq.recall(t, 10, ef), par.recall(t, 10, ef)
		t.Logf("ef %d: recall@10 sequential %.4f, parallel %.4f", ef, s, p)
		if p < s-0.01 {
			t.Errorf("ef %d: parallel build recall@10 %.4f below sequential %.4f - 0.01", ef, p, s)
		}
	}
}

// TestParallelAddWithSearches is for -race: a small graph grows in batches on several workers
// while other goroutines search it, delete from it and read its vectors; built from floats
// and from codes (whose searches and Vector read the spill file the Add writes).
func TestParallelAddWithSearches(t *testing.T) {
	for _, build := range []string{hnsw.BuildFloat, hnsw.BuildCodes} {
		t.Run(build, func(t *testing.T) {
			parallelAddWithSearches(t, hnsw.Options{Seed: 6, M: 4, EfConstruction: 16, Workers: 4, Build: build, SpillDir: t.TempDir()})
		})
	}
}

func parallelAddWithSearches(t *testing.T, opts hnsw.Options) {
	f := newFixture(t, 200, 20, 16, opts)
	defer f.graph.Close()
	more := annbench.Generate(1200, 1, 16, 99).Base // not the fixture's seed: no duplicates
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := f.ds.Queries[(i+w)%len(f.ds.Queries)]
				if _, err := f.graph.Search(q, 5, 16); err != nil {
					t.Error(err)
					return
				}
				f.graph.Vector(uint64(1000 + i%200))
			}
		})
	}
	for b := 0; b < len(more); b += 300 {
		keys := make([]uint64, 300)
		for i := range keys {
			keys[i] = uint64(100000 + b + i)
		}
		if err := f.graph.Add(ctx, keys, more[b:b+300]); err != nil {
			t.Fatal(err)
		}
		f.graph.Delete(uint64(1000 + b/300))
	}
	close(stop)
	wg.Wait()
	if f.graph.Len() != 1400 || f.graph.Live() != 1396 {
		t.Fatalf("Len %d, Live %d; want 1400, 1396", f.graph.Len(), f.graph.Live())
	}
	miss := 0
	for i, v := range more {
		if got, _ := f.graph.Search(v, 1, 32); len(got) != 1 || got[0].Key != uint64(100000+i) {
			miss++
		}
	}
	if miss > len(more)/100 {
		t.Errorf("%d of %d points added by parallel workers do not find themselves", miss, len(more))
	}
}
