package hnsw

import (
	"fmt"
	"slices"
	"unsafe"
)

// searchScratch is the per-search working memory, pooled so a search allocates only its result.
type searchScratch struct {
	visited  []uint32 // visited[id] == gen marks id as seen in the current search
	gen      uint32
	cand     maxHeap
	res      minHeap
	q        []float32         // normalised query copy
	qs       []float32         // query scaled for the codes (mapped graphs)
	qb       []uint64          // query bits (mapped graphs with binary codes)
	lut      []float32         // asymmetric walk's tables (asymTable), nil for a Hamming walk
	lutBuf   []float32         // lut's storage, kept between searches
	vec      []float32         // a float vector read for rescoring (mapped graphs)
	qv, dec  []float32         // decoded node vectors (build path, graphs built from codes)
	lv       []float32         // decoded node vector (build path, link)
	ids      []uint32          // neighbour list copy (build path), unvisited neighbours (search path)
	todo     []uint32          // unvisited neighbours (build path)
	levelSel [maxLevels][]item // selected neighbours per level (build path)
}

func (g *Graph) getScratch(n int) *searchScratch {
	s, _ := g.scratch.Get().(*searchScratch)
	if s == nil {
		s = &searchScratch{}
	}
	if len(s.visited) < n {
		s.visited = make([]uint32, n+n/4)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 { // wrapped: old stamps could collide with new generations
		clear(s.visited)
		s.gen = 1
	}
	return s
}

// Search returns up to k live keys nearest to q, best first. ef is the candidate-list size; ef <= 0
// uses Options.EfSearch, and ef below k is raised to k. Larger ef trades speed for recall.
func (g *Graph) Search(q []float32, k, ef int) ([]Result, error) {
	return g.SearchFiltered(q, k, ef, nil)
}

// SearchFiltered is Search restricted to the keys keep accepts (nil: all). The filter is
// applied inside the graph walk: nodes that fail it are expanded, so the graph stays
// connected, but never enter the results, and the walk goes on until it holds ef that pass.
// A selective filter therefore costs more nodes visited, never fewer results; a filter that
// passes almost nothing is best served by SearchExactFiltered.
func (g *Graph) SearchFiltered(q []float32, k, ef int, keep func(key uint64) bool) ([]Result, error) {
	if len(q) != g.dim {
		return nil, fmt.Errorf("%w: query has %d, index has %d", ErrDim, len(q), g.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	if ef <= 0 {
		ef = g.opts.EfSearch
	}
	ef = max(ef, k)

	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, ErrClosed
	}
	if g.maxLevel < 0 || g.nDeleted == len(g.keys) {
		return nil, nil
	}
	s := g.getScratch(len(g.keys))
	defer g.scratch.Put(s)
	if g.opts.Metric == Cosine {
		s.q = slices.Grow(s.q[:0], g.dim)[:g.dim]
		normalizeInto(s.q, q)
		q = s.q
	}
	if g.bits != nil {
		return g.searchBinary(s, q, k, ef, keep)
	}
	if g.mapped != nil {
		return g.searchCoded(s, q, k, ef, keep)
	}
	if g.bcodes != nil {
		return g.searchBuilt(s, q, k, ef, keep)
	}

	cur := g.entry
	curS := dot(q, g.vec(cur))
	for l := g.maxLevel; l > 0; l-- {
		cur, curS = g.greedy(q, cur, curS, l)
	}
	g.searchLevel0(s, q, cur, curS, ef, keep)

	// Drain the min-heap worst first, then keep the best k.
	res := s.res
	out := make([]Result, len(res))
	for i := len(out) - 1; i >= 0; i-- {
		it := res.pop()
		out[i] = Result{Key: g.keys[it.id], Score: it.score}
	}
	s.res = res[:0]
	sortResults(out)
	if len(out) > k {
		out = out[:k:k]
	}
	return out, nil
}

// greedy walks level l from cur to a local maximum of similarity (ef = 1 search).
func (g *Graph) greedy(q []float32, cur uint32, curS float32, l int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		lst := g.list(cur, l)
		for _, nb := range lst[1 : 1+lst[0]] {
			if s := dot(q, g.vec(nb)); s > curS {
				cur, curS, changed = nb, s, true
			}
		}
	}
	return cur, curS
}

// searchLevel0 is the paper's SEARCH-LAYER on level 0 at query time: deleted nodes are expanded
// (they keep the graph connected) but never enter the result heap s.res.
func (g *Graph) searchLevel0(s *searchScratch, q []float32, ep uint32, epS float32, ef int, keep func(uint64) bool) {
	vis, gen := s.visited, s.gen
	cand, res := s.cand[:0], s.res[:0]
	vis[ep] = gen
	cand.push(item{epS, ep})
	if g.admits(ep, keep) {
		res.push(item{epS, ep})
	}
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= ef && c.score < res[0].score {
			break
		}
		o := int(c.id) * g.stride
		lst := g.level0[o : o+g.stride : o+g.stride]
		// Collect the unvisited neighbours and prefetch their vectors before scoring any: the
		// vectors are scattered over memory, and overlapping the cache misses is most of the
		// speed-up hnswlib gets from its prefetches.
		todo := s.ids[:0]
		for _, nb := range lst[1 : 1+lst[0]] {
			if vis[nb] == gen {
				continue
			}
			vis[nb] = gen
			todo = append(todo, nb)
			prefetch(unsafe.Pointer(&g.vecs[int(nb)*g.dim]), g.prefetchLines)
		}
		s.ids = todo
		for _, nb := range todo {
			sc := dot(q, g.vec(nb))
			if len(res) < ef || sc > res[0].score {
				cand.push(item{sc, nb})
				// Its list will likely be expanded soon; start loading it now.
				prefetch(unsafe.Pointer(&g.level0[int(nb)*g.stride]), 2)
				if g.admits(nb, keep) {
					res.push(item{sc, nb})
					if len(res) > ef {
						res.pop()
					}
				}
			}
		}
	}
	s.cand, s.res = cand[:0], res
}

// admits reports whether node id may enter the results: live, and accepted by keep.
func (g *Graph) admits(id uint32, keep func(uint64) bool) bool {
	return !g.isDeleted(id) && (keep == nil || keep(g.keys[id]))
}

// sortResults orders by score descending, then key ascending, so equal scores sort stably.
func sortResults(r []Result) {
	slices.SortFunc(r, func(a, b Result) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
}
