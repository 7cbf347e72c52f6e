package hnsw

import "fmt"

// SearchExact returns the k live keys with the highest scores by scanning every vector of the
// graph: the reference HNSW results are measured against, without a second copy of the
// vectors. Same ordering as Exact.Search (ties by ascending key).
func (g *Graph) SearchExact(q []float32, k int) ([]Result, error) {
	return g.SearchExactFiltered(q, k, nil)
}

// SearchExactFiltered is SearchExact over the keys keep accepts (nil: all).
func (g *Graph) SearchExactFiltered(q []float32, k int, keep func(key uint64) bool) ([]Result, error) {
	if len(q) != g.dim {
		return nil, fmt.Errorf("%w: query has %d, index has %d", ErrDim, len(q), g.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	if g.opts.Metric == Cosine {
		nq := make([]float32, g.dim)
		normalizeInto(nq, q)
		q = nq
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, ErrClosed
	}
	top := make([]Result, 0, k+1)
	scan := func(first int, block []float32) error {
		for j := 0; j*g.dim < len(block); j++ {
			i := first + j
			key := g.keys[i]
			if g.isDeleted(uint32(i)) || keep != nil && !keep(key) {
				continue
			}
			r := Result{key, dot(q, block[j*g.dim:(j+1)*g.dim])}
			if len(top) == k && !better(r, top[0]) {
				continue
			}
			top = pushResult(top, r)
			if len(top) > k {
				top = popResult(top)
			}
		}
		return nil
	}
	// A mapped graph, or one built from codes, streams its vectors from its file in blocks:
	// exact search reads them all, and mapping them would leave all of them resident.
	if err := g.eachVec(scan); err != nil {
		return nil, err
	}
	sortResults(top)
	return top, nil
}
