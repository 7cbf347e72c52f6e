package hnsw

import (
	"slices"
	"unsafe"
)

// searchCoded is SearchFiltered on a mapped graph: the walk scores nodes by their one-byte codes
// (see quant.go), then the best candidates are rescored with their float vectors, read from the
// file, so the scores returned are exact dot products, the same as the in-memory graph's. g.mu is
// held shared; q is normalised.
func (g *Graph) searchCoded(s *searchScratch, q []float32, k, ef int, keep func(uint64) bool) ([]Result, error) {
	s.qs = slices.Grow(s.qs[:0], g.dim)[:g.dim]
	qs := s.qs
	c0 := g.quant.prepare(qs, q)

	cur := g.entry
	curS := c0 + dotU8(qs, g.code(cur))
	for l := g.maxLevel; l > 0; l-- {
		cur, curS = g.greedyCoded(qs, c0, cur, curS, l)
	}
	g.searchLevel0Coded(s, qs, c0, cur, curS, ef, keep)

	// Drain the heap worst first, so cands ends up best first by code score.
	res := s.res
	cands := slices.Grow(s.ids[:0], len(res))[:len(res)]
	for i := len(cands) - 1; i >= 0; i-- {
		cands[i] = res.pop().id
	}
	s.res, s.ids = res[:0], cands[:0]
	return g.rescoreFloat(s, q, cands, k)
}

// rescoreFloat scores the first LoadOptions.Rescore (default 2*k) of cands, best first by an
// approximate score, with their float vectors read from the file, and returns the best k.
func (g *Graph) rescoreFloat(s *searchScratch, q []float32, cands []uint32, k int) ([]Result, error) {
	r := 2 * k
	if g.rescore > 0 {
		r = max(g.rescore, k)
	}
	return g.rescoreFloatN(s, q, cands, k, r)
}

// rescoreFloatN is rescoreFloat of the first r candidates.
func (g *Graph) rescoreFloatN(s *searchScratch, q []float32, cands []uint32, k, r int) ([]Result, error) {
	cands = cands[:min(len(cands), r)]
	s.vec = slices.Grow(s.vec[:0], g.dim)[:g.dim]
	out := make([]Result, len(cands))
	f := g.floatFile()
	for i, id := range cands {
		if err := f.vector(id, s.vec); err != nil {
			return nil, err
		}
		out[i] = Result{Key: g.keys[id], Score: dot(q, s.vec)}
	}
	sortResults(out)
	if len(out) > k {
		out = out[:k:k]
	}
	return out, nil
}

// greedyCoded is greedy over the codes.
func (g *Graph) greedyCoded(qs []float32, c0 float32, cur uint32, curS float32, l int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		lst := g.list(cur, l)
		for _, nb := range lst[1 : 1+lst[0]] {
			if s := c0 + dotU8(qs, g.code(nb)); s > curS {
				cur, curS, changed = nb, s, true
			}
		}
	}
	return cur, curS
}

// searchLevel0Coded is searchLevel0 over the codes; it leaves the ef best admitted nodes by
// code score in s.res.
func (g *Graph) searchLevel0Coded(s *searchScratch, qs []float32, c0 float32, ep uint32, epS float32, ef int, keep func(uint64) bool) {
	vis, gen := s.visited, s.gen
	cand, res := s.cand[:0], s.res[:0]
	lines := (g.dim + 63) / 64
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
		todo := s.ids[:0]
		for _, nb := range lst[1 : 1+lst[0]] {
			if vis[nb] == gen {
				continue
			}
			vis[nb] = gen
			todo = append(todo, nb)
			prefetch(unsafe.Pointer(&g.codes[int(nb)*g.dim]), lines)
		}
		s.ids = todo
		for _, nb := range todo {
			sc := c0 + dotU8(qs, g.code(nb))
			if len(res) < ef || sc > res[0].score {
				cand.push(item{sc, nb})
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
