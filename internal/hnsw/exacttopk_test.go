package hnsw_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// TestExactTopKMatchesExact checks ExactTopK against Exact under Dot over the same vectors, with
// exact ties (duplicated vectors), across tile edges, with more workers than tiles and k above n.
func TestExactTopKMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim = 12
	for _, tc := range []struct{ n, q, k, workers int }{
		{n: 1, q: 3, k: 10, workers: 0},
		{n: 255, q: 7, k: 10, workers: 1},
		{n: 257, q: 7, k: 10, workers: 2},
		{n: 1000, q: 20, k: 10, workers: 3},
		{n: 1000, q: 5, k: 1, workers: 8},
		{n: 40, q: 5, k: 100, workers: 2},
	} {
		t.Run(fmt.Sprintf("n%d_k%d_w%d", tc.n, tc.k, tc.workers), func(t *testing.T) {
			base := make([][]float32, tc.n)
			for i := range base {
				if i%9 == 8 {
					base[i] = base[i-3] // ties, broken by the lower index
					continue
				}
				base[i] = make([]float32, dim)
				for j := range base[i] {
					base[i][j] = float32(rng.NormFloat64())
				}
			}
			queries := make([][]float32, tc.q)
			for i := range queries {
				queries[i] = make([]float32, dim)
				for j := range queries[i] {
					queries[i][j] = float32(rng.NormFloat64())
				}
			}
			ex, err := hnsw.NewExact(dim, hnsw.Dot)
			if err != nil {
				t.Fatal(err)
			}
			keys := make([]uint64, tc.n)
			for i := range keys {
				keys[i] = uint64(i)
			}
			if err := ex.Add(keys, base); err != nil {
				t.Fatal(err)
			}
			got, err := hnsw.ExactTopK(context.Background(), base, queries, tc.k, tc.workers)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.q {
				t.Fatalf("%d result lists for %d queries", len(got), tc.q)
			}
			for qi, q := range queries {
				want, err := ex.Search(q, tc.k)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got[qi], want) {
					t.Fatalf("query %d:\n got %v\nwant %v", qi, got[qi], want)
				}
			}
		})
	}
}

func TestExactTopKRefuses(t *testing.T) {
	base := [][]float32{{1, 0}, {0, 1}, {1, 1}}
	if _, err := hnsw.ExactTopK(context.Background(), base, [][]float32{{1, 0, 0}}, 2, 1); !errors.Is(err, hnsw.ErrDim) {
		t.Errorf("base of dim 2, query of dim 3: err %v, want ErrDim", err)
	}
	if _, err := hnsw.ExactTopK(context.Background(), base, [][]float32{{1, 0}, {1}}, 2, 1); !errors.Is(err, hnsw.ErrDim) {
		t.Errorf("queries of dims 2 and 1: err %v, want ErrDim", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := hnsw.ExactTopK(ctx, base, [][]float32{{1, 0}}, 2, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err %v, want context.Canceled", err)
	}
}
