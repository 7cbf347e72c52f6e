// Package annbench measures vector indexes against exact search: the hnsw index in this process
// (Run, RunData, RunLoaded), and every vector index of a comparison on the same vectors
// (Compare): Kairos's own (KairosEngines) and the engines users pick instead (hnswlib, FAISS,
// Qdrant, LanceDB), each built by a child process on every core and served by another confined
// to one CPU, so that each one's peak and resident memory are its own; recall@10 is computed
// here, the same way for all, from the ids each one returns at each point of its knob's sweep.
// The `kairos bench ann` subcommand is a thin flag layer over Run and Compare, `kairos bench
// ann-engine` over RunEngine (the child of Kairos's indexes), and `kairos bench scale
// --dense-engines` runs Compare on the vectors of the indexes it builds.
package annbench

import (
	"math"
	"math/rand/v2"
)

// Dataset generation, fixed so every run and every tool sees the same vectors for a seed:
//   - Centres: 200 vectors with every coordinate drawn from N(0, 1) (not normalised), from
//     PCG(seed, 0). A centre's norm is about sqrt(dim), so noise of sigma 0.8 per coordinate leaves
//     a point at cosine about 1/sqrt(1+0.64) = 0.78 from its centre: clusters overlap little, but
//     inside a cluster the neighbours are as hard to rank as random points, which is what makes
//     the graph work for its recall.
//   - Base vector i: a centre chosen uniformly, plus N(0, 0.8^2) per coordinate, then
//     L2-normalised; from PCG(seed, 1). Queries are drawn the same way from PCG(seed, 2), so they
//     are not base points.
const (
	Centres = 200
	Sigma   = 0.8
)

// Dataset is a base set and a query set of unit vectors.
type Dataset struct {
	Dim     int
	Base    [][]float32
	Queries [][]float32
}

// Generate builds the clustered dataset described above.
func Generate(n, queries, dim int, seed int64) Dataset {
	crng := rand.New(rand.NewPCG(uint64(seed), 0))
	centres := make([][]float64, Centres)
	for i := range centres {
		c := make([]float64, dim)
		for j := range c {
			c[j] = crng.NormFloat64()
		}
		centres[i] = c
	}
	return Dataset{
		Dim:     dim,
		Base:    sample(centres, n, dim, rand.New(rand.NewPCG(uint64(seed), 1))),
		Queries: sample(centres, queries, dim, rand.New(rand.NewPCG(uint64(seed), 2))),
	}
}

// sample draws n points around random centres, stored in one flat backing array.
func sample(centres [][]float64, n, dim int, rng *rand.Rand) [][]float32 {
	flat := make([]float32, n*dim)
	out := make([][]float32, n)
	tmp := make([]float64, dim)
	for i := range out {
		c := centres[rng.IntN(len(centres))]
		var ss float64
		for j := range tmp {
			x := c[j] + Sigma*rng.NormFloat64()
			tmp[j] = x
			ss += x * x
		}
		inv := 1 / math.Sqrt(ss)
		v := flat[i*dim : (i+1)*dim : (i+1)*dim]
		for j, x := range tmp {
			v[j] = float32(x * inv)
		}
		out[i] = v
	}
	return out
}
