package ivf_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/kairos-rag/kairos/internal/ivf"
)

// Build an index of 2,000 vectors, commit it, open it and search it: the entry point a
// benchmark uses to measure the index on its own vectors.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ivf-example")
	defer os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, 2000)
	keys := make([]uint32, len(vecs))
	for i := range vecs {
		vecs[i] = make([]float32, 64)
		for d := range vecs[i] {
			vecs[i][d] = float32(rng.NormFloat64())
		}
		keys[i] = uint32(i)
	}
	w, err := ivf.Create(dir, 64, ivf.Options{}, len(vecs))
	if err != nil {
		panic(err)
	}
	if err := w.Add(ctx, keys, vecs); err != nil {
		panic(err)
	}
	if _, err := w.Commit(ctx, true, nil); err != nil {
		panic(err)
	}
	r, err := ivf.Open(dir, ivf.OpenOptions{})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	hits, err := r.Search(vecs[1234], 3, ivf.SearchOptions{Probe: 8}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d lists; nearest to vector 1234: key %d, score %.4f\n", r.Options().Lists, hits[0].Key, hits[0].Score)
	// Output: 128 lists; nearest to vector 1234: key 1234, score 1.0000
}
