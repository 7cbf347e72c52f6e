package hnsw

import (
	"context"
	"math/rand"
	"reflect"
	"testing"
)

// SearchExact on a graph must give exactly what the separate Exact index gives.
func TestSearchExactMatchesExact(t *testing.T) {
	const n, dim = 2000, 32
	rng := rand.New(rand.NewSource(7))
	keys := make([]uint64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = uint64(i * 3)
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	g, err := New(dim, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	e, _ := NewExact(dim, Cosine)
	e.Add(keys, vecs)
	for _, k := range []uint64{0, 30, 300} {
		g.Delete(k)
		e.Delete(k)
	}
	for i := 0; i < 50; i++ {
		q := vecs[rng.Intn(n)]
		want, _ := e.Search(q, 10)
		got, err := g.SearchExact(q, 10)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d: graph exact %v, Exact %v (%v)", i, got, want, err)
		}
	}
}
