package hnsw_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// TestExactMatchesSort checks Exact against scoring everything and sorting, including ties
// (duplicated vectors) and deletes.
func TestExactMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, dim = 300, 8
	ex, err := hnsw.NewExact(dim, hnsw.Dot)
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, n)
	keys := make([]uint64, n)
	for i := range vecs {
		if i%10 == 9 {
			vecs[i] = vecs[i-1] // exact ties
		} else {
			vecs[i] = make([]float32, dim)
			for j := range vecs[i] {
				vecs[i][j] = float32(rng.NormFloat64())
			}
		}
		keys[i] = uint64(n - i) // keys not in insertion order
	}
	if err := ex.Add(keys, vecs); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 7 {
		ex.Delete(keys[i])
	}
	for qi := range 20 {
		q := vecs[qi*5]
		var all []hnsw.Result
		for i, v := range vecs {
			if i%7 == 0 {
				continue
			}
			var s float32
			for j := range v {
				s += q[j] * v[j]
			}
			all = append(all, hnsw.Result{Key: keys[i], Score: s})
		}
		slices.SortFunc(all, func(a, b hnsw.Result) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return int(a.Key) - int(b.Key)
		})
		got, err := ex.Search(q, 15)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			// Scores from the 8-lane dot may differ from the sequential sum in the last bit.
			if got[i].Key != all[i].Key && abs(got[i].Score-all[i].Score) > 1e-5 {
				t.Fatalf("query %d rank %d: got %+v, want %+v", qi, i, got[i], all[i])
			}
		}
	}
	if ex.Live() != n-(n+6)/7 {
		t.Errorf("Live = %d", ex.Live())
	}
}

func abs(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
