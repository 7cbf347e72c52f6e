package hnsw_test

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

func Example() {
	g, err := hnsw.New(3, hnsw.Options{Seed: 1}) // M 16, efConstruction 200, cosine
	if err != nil {
		panic(err)
	}
	err = g.Add(context.Background(),
		[]uint64{10, 20, 30},
		[][]float32{{1, 0, 0}, {0.9, 0.1, 0}, {0, 0, 1}})
	if err != nil {
		panic(err)
	}
	g.Delete(10)
	res, _ := g.Search([]float32{1, 0, 0}, 2, 0) // ef 0: Options.EfSearch
	for _, r := range res {
		fmt.Printf("key %d score %.3f\n", r.Key, r.Score)
	}
	// Output:
	// key 20 score 0.994
	// key 30 score 0.000
}
