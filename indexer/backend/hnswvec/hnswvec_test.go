package hnswvec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// meta gives every key a source: key%100 < pct of them are "rare", the rest "common".
type meta struct{ pct uint32 }

func (m meta) Meta(key uint32) (time.Time, string, error) {
	if key%100 < m.pct {
		return time.Time{}, "rare", nil
	}
	return time.Time{}, "common", nil
}

func randVecs(rng *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// TestFilteredSearchInsideTheGraph: a filter that passes 2% of the passages still gives K
// hits, all passing, nearly the exact filtered top K; filtering the unfiltered top K after
// the search, as search did before the seam, would leave almost nothing.
func TestFilteredSearchInsideTheGraph(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n, dim, k = 5000, 32, 10
	rng := rand.New(rand.NewPCG(1, 2))
	w, err := Engine{Params: hnsw.Options{M: 12, EfConstruction: 100, Seed: 1, Workers: 1}}.Begin(ctx, backend.Gen{Dir: dir}, dim, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]uint32, n)
	for i := range keys {
		keys[i] = uint32(i)
	}
	if err := w.Add(ctx, keys, randVecs(rng, n, dim)); err != nil {
		t.Fatal(err)
	}
	w.Delete(2) // a deleted passing key must never come back
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	m := meta{pct: 2}
	r, err := Engine{}.Open(ctx, backend.Gen{Dir: dir}, m)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rare := backend.Filter{Sources: []string{"rare"}}
	var recall, postFiltered float64
	const queries = 50
	for qi := range queries {
		q := randVecs(rng, 1, dim)[0]
		got, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Ef: 64, Filter: rare})
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Exact: true, Filter: rare})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != k || len(want) != k {
			t.Fatalf("query %d: %d hits, exact %d, want %d", qi, len(got), len(want), k)
		}
		exact := map[uint32]bool{}
		for _, h := range want {
			exact[h.Key] = true
		}
		for _, h := range got {
			if _, src, _ := m.Meta(h.Key); src != "rare" || h.Key == 2 {
				t.Fatalf("query %d: hit %d fails the filter or is deleted", qi, h.Key)
			}
			if exact[h.Key] {
				recall++
			}
		}
		all, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range all {
			if _, src, _ := m.Meta(h.Key); src == "rare" {
				postFiltered++
			}
		}
	}
	recall /= queries * k
	postFiltered /= queries
	t.Logf("filtered recall@%d %.3f; filtering after the search would keep %.2f hits a query", k, recall, postFiltered)
	if recall < 0.9 {
		t.Errorf("filtered recall@%d %.3f, want >= 0.9", k, recall)
	}
	if postFiltered > 2 {
		t.Errorf("post-filtering kept %.2f hits a query: the filter is not selective enough to test anything", postFiltered)
	}
}

// TestMetaErrorFailsTheSearch: an unreadable passage fails the search rather than being
// treated as not matching.
func TestMetaErrorFailsTheSearch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Engine{}.Begin(ctx, backend.Gen{Dir: dir}, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, []uint32{0, 1}, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, failingMeta{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Search(ctx, backend.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1, Filter: backend.Filter{Sources: []string{"x"}}})
	if err == nil {
		t.Fatal("search succeeded with unreadable metadata")
	}
}

type failingMeta struct{}

func (failingMeta) Meta(key uint32) (time.Time, string, error) {
	return time.Time{}, "", fmt.Errorf("passage key %d: bad offsets", key)
}
