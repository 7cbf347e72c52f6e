package hnsw_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

func TestDelete(t *testing.T) {
	f := newFixture(t, 4000, 200, 48, hnsw.Options{Seed: 4})
	deleted := map[uint64]bool{}
	for i, k := range f.keys {
		if i%4 == 1 { // a quarter, spread over all clusters
			if !f.graph.Delete(k) || !f.exact.Delete(k) {
				t.Fatalf("Delete(%d) = false for a live key", k)
			}
			deleted[k] = true
		}
	}
	if f.graph.Delete(f.keys[1]) {
		t.Error("second Delete of the same key returned true")
	}
	if f.graph.Delete(123456789) {
		t.Error("Delete of an unknown key returned true")
	}
	if f.graph.Live() != 3000 || f.graph.Len() != 4000 {
		t.Errorf("Live/Len = %d/%d, want 3000/4000", f.graph.Live(), f.graph.Len())
	}
	for _, q := range f.ds.Queries {
		got, _ := f.graph.Search(q, 10, 64)
		for _, r := range got {
			if deleted[r.Key] {
				t.Fatalf("deleted key %d returned", r.Key)
			}
		}
	}
	// Searching for a deleted point itself must not return it.
	for i := 1; i < 200; i += 4 {
		got, _ := f.graph.Search(f.ds.Base[i], 5, 64)
		for _, r := range got {
			if r.Key == f.keys[i] {
				t.Fatalf("deleted point %d found by its own vector", i)
			}
		}
	}
	if r := f.recall(t, 10, 64); r < 0.95 {
		t.Errorf("recall@10 of the live keys after deleting 25%% = %.3f, want >= 0.95", r)
	}
	// A deleted key can be added again, with a new vector, and is found under it.
	if err := f.graph.Add(context.Background(), []uint64{f.keys[1]}, [][]float32{f.ds.Queries[0]}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.graph.Search(f.ds.Queries[0], 1, 0); len(got) != 1 || got[0].Key != f.keys[1] {
		t.Errorf("re-added key not found: %v", got)
	}
}

// TestConcurrentSearchAndAdd runs searches on several goroutines while batches are added and keys
// deleted; run it with -race.
func TestConcurrentSearchAndAdd(t *testing.T) {
	f := newFixture(t, 600, 50, 16, hnsw.Options{Seed: 8, EfConstruction: 40, Workers: 3})
	more := annbench.Generate(600, 1, 16, 99) // a different seed: new points, not copies
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := range 100 {
				q := f.ds.Queries[(i+w)%len(f.ds.Queries)]
				got, err := f.graph.Search(q, 5, 20)
				if err != nil || len(got) == 0 {
					t.Errorf("search: %v, %d results", err, len(got))
					return
				}
				checkSorted(t, got)
			}
		})
	}
	wg.Go(func() {
		for b := 0; b < 600; b += 100 {
			keys := make([]uint64, 100)
			for i := range keys {
				keys[i] = uint64(50000 + b + i)
			}
			if err := f.graph.Add(context.Background(), keys, more.Base[b:b+100]); err != nil {
				t.Error(err)
				return
			}
			f.graph.Delete(f.keys[b])
		}
	})
	wg.Wait()
	if f.graph.Len() != 1200 || f.graph.Live() != 1194 {
		t.Errorf("Len/Live = %d/%d, want 1200/1194", f.graph.Len(), f.graph.Live())
	}
	// The points added concurrently are reachable. At this tiny efConstruction an HNSW graph can
	// leave the odd node without in-links (hnswlib too), so allow 1%; a broken concurrent build
	// loses far more.
	miss := 0
	for i, v := range more.Base {
		if got, _ := f.graph.Search(v, 1, 64); len(got) != 1 || got[0].Key != uint64(50000+i) {
			miss++
		}
	}
	if miss > len(more.Base)/100 {
		t.Errorf("%d of %d points added concurrently do not find themselves", miss, len(more.Base))
	}
}

func TestAddCancelled(t *testing.T) {
	ds := newFixture(t, 10, 1, 16, hnsw.Options{}).ds
	more := newFixture(t, 3000, 1, 16, hnsw.Options{}).ds
	for _, workers := range []int{1, 2} {
		g, _ := hnsw.New(16, hnsw.Options{Workers: workers})
		keys := make([]uint64, 3000)
		for i := range keys {
			keys[i] = uint64(i)
		}
		if err := g.Add(context.Background(), keys[:10], ds.Base); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := g.Add(ctx, keys[10:], more.Base[10:]); err == nil {
			t.Fatal("cancelled Add returned nil")
		}
		if g.Len() >= 3000 || g.Len() < 10 {
			t.Fatalf("workers %d: Len %d after cancelled Add", workers, g.Len())
		}
		// The rolled-back graph is consistent: it round-trips through the structural checks and
		// the keys not inserted can be added again.
		if _, err := hnsw.Read(bytesOf(t, g)); err != nil {
			t.Fatalf("workers %d: graph after cancel does not reload: %v", workers, err)
		}
		n := g.Len()
		if err := g.Add(context.Background(), keys[n:], more.Base[n:]); err != nil {
			t.Fatalf("workers %d: re-adding the rest: %v", workers, err)
		}
	}
}
