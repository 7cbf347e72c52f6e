package hnsw

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// exactTile is how many base vectors a worker scores against every query before it moves on:
// the tile stays in cache while the queries pass over it, so the base set is read from memory
// once, not once per query (at 10M x 256 that is 10 GB, against 10 TB for 1,000 queries).
const exactTile = 256

// ExactTopK returns, for every query, the k vectors of base with the highest inner product
// (Result.Key is the index in base), best first, ties by ascending index: what an Exact under
// Dot holding base returns, without copying base. Exact keeps its own copy of every vector so
// that it can take deletions; a benchmark's ground truth over a base set that fills half the
// memory cannot afford that copy. The base is split over workers goroutines (0: GOMAXPROCS);
// the first error, or ctx's, stops them.
func ExactTopK(ctx context.Context, base, queries [][]float32, k, workers int) ([][]Result, error) {
	if k <= 0 || len(queries) == 0 {
		return make([][]Result, len(queries)), nil
	}
	dim := len(queries[0])
	for i, q := range queries {
		if len(q) != dim {
			return nil, fmt.Errorf("%w: exact top-k: query %d has %d, query 0 has %d", ErrDim, i, len(q), dim)
		}
	}
	for i, v := range base {
		if len(v) != dim {
			return nil, fmt.Errorf("%w: exact top-k: base vector %d has %d, the queries %d", ErrDim, i, len(v), dim)
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, (len(base)+exactTile-1)/exactTile), 1)
	// heaps[w][qi] is worker w's k best for query qi over its share of base.
	heaps := make([][][]Result, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	per := (len(base) + workers - 1) / workers
	for w := range workers {
		lo, hi := min(w*per, len(base)), min((w+1)*per, len(base))
		wg.Go(func() {
			h := make([][]Result, len(queries))
			for qi := range h {
				h[qi] = make([]Result, 0, k+1)
			}
			heaps[w] = h
			for t := lo; t < hi; t += exactTile {
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				tile := base[t:min(t+exactTile, hi)]
				for qi, q := range queries {
					top := h[qi]
					for j, v := range tile {
						r := Result{Key: uint64(t + j), Score: dot(q, v)}
						if len(top) == k && !better(r, top[0]) {
							continue
						}
						if top = pushResult(top, r); len(top) > k {
							top = popResult(top)
						}
					}
					h[qi] = top
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := make([][]Result, len(queries))
	for qi := range queries {
		all := make([]Result, 0, workers*k)
		for w := range workers {
			all = append(all, heaps[w][qi]...)
		}
		sortResults(all)
		out[qi] = all[:min(k, len(all))]
	}
	return out, nil
}
