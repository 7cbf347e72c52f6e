package hnsw

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// DeferRepair makes every later Add skip the repair pass, which Repair (or WriteTo, hence
// Save) then runs once. repair walks the whole graph, so running it after each Add costs
// O(n) per batch to a build that adds a collection batch by batch (kairos index adds 5,000
// vectors at a time): deferring it took `kairos index` of 100k synthetic passages with a static
// 256-d model from 49.1 s to 29.2 s on 2 cores. A graph searched between Adds should not defer:
// until Repair, a few nodes may be unreachable.
func (g *Graph) DeferRepair() {
	g.mu.Lock()
	g.deferRepair = true
	g.mu.Unlock()
}

// MarkUnrepaired says the graph may hold nodes the repair pass has not seen, as one read from a
// SaveCheckpoint file may: the next Repair, WriteTo or Save runs the pass, even if nothing is
// added meanwhile. A graph opened mapped is read into the form the pass changes (the pass
// cannot link nodes of a read-only mapping) when something changes it first: the next Add,
// Reserve or pass, so that a Reserve reads it into arrays of their final size.
func (g *Graph) MarkUnrepaired() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	g.unrepaired = true
	return nil
}

// Repair runs the repair pass if an Add has skipped it (DeferRepair) or MarkUnrepaired asked
// for it, and returns the number of nodes it linked to. It fails only when a mapped graph
// cannot be read into memory for the pass (built from codes, that writes its float vectors
// to a spill file in Options.SpillDir, which a full disk refuses).
func (g *Graph) Repair() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.unrepaired || g.closed {
		return 0, nil
	}
	if err := g.writable(0); err != nil {
		return 0, fmt.Errorf("hnsw: repair: %w", err)
	}
	g.unrepaired = false
	s := g.getScratch(len(g.keys))
	defer g.scratch.Put(s)
	return g.repair(s), nil
}

// OnRepair has fn told how far the repair pass has got, so that a build can show it: the pass
// self-searches every node with few in-links, which can take most of what the insertion took
// (`kairos index` of 10M static-fixture vectors on 2 cores: 37 minutes with the final save,
// after 54 of insertion). fn gets 0 and the number of nodes
// to check when the pass starts, then the number checked every 1,024 and at the end; it is
// called from the pass's goroutines at once and must be safe for concurrent use, and with the
// graph locked, so it must not call the graph's methods. nil: none.
func (g *Graph) OnRepair(fn func(checked, total int)) {
	g.mu.Lock()
	g.onRepair = fn
	g.mu.Unlock()
}

// repairMaxIndeg: nodes with at most this many level-0 in-links get a self-search check.
const repairMaxIndeg = 2

// repair fixes what HNSW's neighbour pruning leaves behind in roughly 1 node in 1,000 on clustered
// data (hnswlib has the same defects): outliers whose only in-links come from far away, which a
// search arriving at their nearest neighbours cannot step to, and islands, nodes or small groups no
// longer reachable from the entry point at all. Search could never return such a node, which for a
// retrieval engine means a passage its own text does not find. repair runs after each Add, single
// threaded but for the self-searches (lostOutliers): one pass over the level-0 lists, a
// self-search for each node with at most repairMaxIndeg in-links, and a breadth-first walk with
// one search per island. It returns the number of nodes it linked to.
func (g *Graph) repair(s *searchScratch) (relinked int) {
	n := len(g.keys)
	if n < 2 {
		return 0
	}
	indeg := make([]int32, n)
	for id := range n {
		lst := g.list(uint32(id), 0)
		for _, nb := range lst[1 : 1+lst[0]] {
			indeg[nb]++
		}
	}
	b := &builder{g: g}
	s.sizeBuild(g.dim)

	// Outliers: search for the node as a query would; if it is not found, link it from the two
	// nodes the search ends at, which is where the next search for it will end too.
	for _, f := range g.lostOutliers(indeg) {
		for _, v := range f.near[:f.n] {
			g.forceLink(s, v, f.u, indeg)
		}
		relinked++
	}

	// Islands: walk level 0 from the entry point, then attach each unreached node to the reached
	// nodes nearest to it.
	reached := make([]bool, n)
	queue := make([]uint32, 0, 64)
	mark := func(from uint32) {
		if reached[from] {
			return
		}
		reached[from] = true
		queue = append(queue[:0], from)
		for len(queue) > 0 {
			c := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			lst := g.list(c, 0)
			for _, nb := range lst[1 : 1+lst[0]] {
				if !reached[nb] {
					reached[nb] = true
					queue = append(queue, nb)
				}
			}
		}
	}
	mark(g.entry)
	for u := range n {
		if reached[u] {
			continue
		}
		_, near := g.searchSelf(b, s, uint32(u), g.opts.EfConstruction)
		linked := 0
		for _, it := range near {
			if reached[it.id] && it.id != uint32(u) {
				g.forceLink(s, it.id, uint32(u), indeg)
				if linked++; linked == 2 {
					break
				}
			}
		}
		if linked > 0 {
			relinked++
			mark(uint32(u))
		}
	}
	return relinked
}

// lostOutlier is a node its own self-search does not find, with the (up to two) nodes the
// search ended at.
type lostOutlier struct {
	u    uint32
	near [2]uint32
	n    int
}

// lostOutliers self-searches every node with at most repairMaxIndeg level-0 in-links and
// returns those not found, in node order. The searches only read the graph, so they run on
// g.opts.Workers goroutines: on one core they took 200 of the 314 seconds of a 1M-passage
// `kairos index --device cuda` (384-d, 16 cores otherwise idle). Every search sees the graph
// as it was before the repair (a sequential pass would see the links added for earlier nodes),
// so the result does not depend on the scheduling.
func (g *Graph) lostOutliers(indeg []int32) []lostOutlier {
	var cands []uint32
	for u, d := range indeg {
		if d <= repairMaxIndeg {
			cands = append(cands, uint32(u))
		}
	}
	ef := max(g.opts.EfSearch, 10)
	workers := max(1, min(g.opts.Workers, len(cands)/64))
	found := make([][]lostOutlier, workers)
	report := g.onRepair
	var checked atomic.Int64
	if report != nil {
		report(0, len(cands))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			s := g.getScratch(len(g.keys))
			defer g.scratch.Put(s)
			s.sizeBuild(g.dim)
			b := &builder{g: g}
			for i := w; i < len(cands); i += workers {
				ok, near := g.searchSelf(b, s, cands[i], ef)
				if report != nil {
					if c := int(checked.Add(1)); c%1024 == 0 || c == len(cands) {
						report(c, len(cands))
					}
				}
				if ok {
					continue
				}
				f := lostOutlier{u: cands[i]}
				for _, it := range near[:min(2, len(near))] {
					f.near[f.n] = it.id
					f.n++
				}
				found[w] = append(found[w], f)
			}
		})
	}
	wg.Wait()
	var all []lostOutlier
	for _, f := range found {
		all = append(all, f...)
	}
	slices.SortFunc(all, func(a, b lostOutlier) int { return cmp.Compare(a.u, b.u) })
	return all
}

// searchSelf searches for node u's own vector from the entry point at ef and reports whether u
// was found, with the found nodes other than u, best first (valid until s is reused).
func (g *Graph) searchSelf(b *builder, s *searchScratch, u uint32, ef int) (bool, []item) {
	q := g.nodeQuery(s.qv, u)
	cur, curS := g.entry, g.sim(q, g.entry)
	for l := g.maxLevel; l > 0; l-- {
		cur, curS = b.greedy(s, q, cur, curS, l)
	}
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	res := b.searchLayer(s, q, cur, curS, 0, ef)
	found := false
	out := res[:0]
	for _, it := range res {
		if it.id == u {
			found = true
			continue
		}
		out = append(out, it)
	}
	return found, out
}

// forceLink adds v -> u on level 0. If v's list is full, u replaces the neighbour with the most
// other in-links (so nobody loses their last one), ties going to the least similar.
// s.lv is overwritten.
func (g *Graph) forceLink(s *searchScratch, v, u uint32, indeg []int32) {
	lst := g.list(v, 0)
	cnt := int(lst[0])
	for _, x := range lst[1 : 1+cnt] {
		if x == u {
			return
		}
	}
	if cnt < g.m0 {
		lst[1+cnt] = u
		lst[0]++
		indeg[u]++
		return
	}
	vv := g.nodeQuery(s.lv, v)
	best, bestDeg, bestS := -1, int32(1), float32(0)
	for i, w := range lst[1 : 1+cnt] {
		d := indeg[w]
		if s := g.sim(vv, w); d > bestDeg || (d == bestDeg && best >= 0 && s < bestS) {
			best, bestDeg, bestS = i, d, s
		}
	}
	if best < 0 { // every neighbour depends on v: replace the least similar anyway
		best = cnt - 1
	}
	indeg[lst[1+best]]--
	lst[1+best] = u
	indeg[u]++
}
