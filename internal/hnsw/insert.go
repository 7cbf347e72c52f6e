package hnsw

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Add inserts vecs[i] under keys[i]. The batch is validated first (dimension, keys unique within
// the batch and not live in the graph) and nothing is inserted if it is invalid. A key that was
// deleted may be added again; it then gets a new node. Insertion runs on Options.Workers
// goroutines. If ctx is cancelled, the vectors inserted so far stay and the rest are rolled back;
// the error says how many were added.
func (g *Graph) Add(ctx context.Context, keys []uint64, vecs [][]float32) error {
	if len(keys) != len(vecs) {
		return fmt.Errorf("hnsw: add: %d keys but %d vectors", len(keys), len(vecs))
	}
	if len(keys) == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := make(map[uint64]int, len(keys))
	for i, v := range vecs {
		if len(v) != g.dim {
			return fmt.Errorf("%w: add: vector %d (key %d) has %d, index has %d", ErrDim, i, keys[i], len(v), g.dim)
		}
		if _, ok := g.lookup(keys[i]); ok {
			return fmt.Errorf("hnsw: add: vector %d: key %d already present (delete it first)", i, keys[i])
		}
		if j, ok := seen[keys[i]]; ok {
			return fmt.Errorf("hnsw: add: vectors %d and %d share key %d", j, i, keys[i])
		}
		seen[keys[i]] = i
	}
	if g.closed {
		return ErrClosed
	}
	if len(g.keys)+len(keys) > maxNodes {
		return fmt.Errorf("hnsw: add: %d nodes would exceed the limit of %d", len(g.keys)+len(keys), maxNodes)
	}
	if err := g.writable(len(keys)); err != nil {
		return fmt.Errorf("hnsw: add: %w", err)
	}

	first := len(g.keys)
	if g.spill != nil {
		if err := g.spillBatch(first, vecs); err != nil {
			return fmt.Errorf("hnsw: add: %w", err)
		}
		defer func() { g.batch = nil }()
	}
	g.grow(keys, vecs)
	next := first
	if g.maxLevel < 0 { // empty graph: the first node is the entry point and needs no links
		g.entry, g.maxLevel = uint32(first), int(g.levels[first])
		next++
	}
	done, err := g.insertAll(ctx, next, len(g.keys))
	if err != nil {
		g.truncate(done)
	}
	if g.deferRepair {
		g.unrepaired = true
	} else {
		s := g.getScratch(len(g.keys))
		g.repair(s)
		g.scratch.Put(s)
	}
	if err != nil {
		return fmt.Errorf("hnsw: add interrupted after %d of %d vectors: %w", done-first, len(keys), err)
	}
	return nil
}

// writable brings a graph opened mapped into the form that Add and the repair pass change:
// codes in memory and its float vectors in a spill file when built from codes (toCodes),
// else its float vectors in memory (thaw); either way, its lists in memory, with room for
// extra more nodes in the arrays read in (Reserve's n: read in at their size and then grown,
// the codes and lists of a resumed 10M build were held twice, 6.02 GB at the peak).
func (g *Graph) writable(extra int) error {
	if g.opts.Build == BuildCodes {
		return g.toCodes(extra)
	}
	if err := g.thaw(extra); err != nil {
		return fmt.Errorf("reading the mapped graph into memory: %w", err)
	}
	return nil
}

// grow appends storage for a batch: vectors (normalised under Cosine) or, built from codes,
// the codes of g.batch; keys, levels, empty lists.
func (g *Graph) grow(keys []uint64, vecs [][]float32) {
	first := len(g.keys)
	n := first + len(keys)
	if g.spill != nil {
		g.growCodes()
	} else {
		g.vecs = slices.Grow(g.vecs, len(keys)*g.dim)
	}
	g.level0 = slices.Grow(g.level0, len(keys)*g.stride)
	for i, v := range vecs {
		if g.spill == nil {
			o := len(g.vecs)
			g.vecs = append(g.vecs, v...)
			if g.opts.Metric == Cosine {
				normalizeInto(g.vecs[o:], v)
			}
		}
		id := uint32(first + i)
		lvl := g.randomLevel(id)
		g.keys = append(g.keys, keys[i])
		g.levels = append(g.levels, lvl)
		g.upperOff = append(g.upperOff, uint32(len(g.upper)))
		if lvl > 0 {
			g.upper = append(g.upper, make([]uint32, int(lvl)*(g.m+1))...)
		}
		g.level0 = append(g.level0, make([]uint32, g.stride)...)
		g.index(keys[i], id)
	}
	for len(g.deleted)*64 < n {
		g.deleted = append(g.deleted, 0)
	}
}

// truncate rolls the graph back to its first n nodes after an interrupted Add. Nodes are claimed
// in id order and a claimed node is always finished, so the first n nodes never link past n.
func (g *Graph) truncate(n int) {
	for _, k := range g.keys[n:] {
		g.unindex(k)
	}
	if n < len(g.keys) {
		g.upper = g.upper[:g.upperOff[n]]
	}
	if g.spill != nil { // the spill file's vectors past n are overwritten by the next Add
		g.bcodes, g.brange = g.bcodes[:n*g.dim], g.brange[:2*n]
	} else {
		g.vecs = g.vecs[:n*g.dim]
	}
	g.keys = g.keys[:n]
	g.levels = g.levels[:n]
	g.upperOff = g.upperOff[:n]
	g.level0 = g.level0[:n*g.stride]
	if n == 0 {
		g.maxLevel = -1
	}
}

// lockStripes is the number of mutexes guarding the neighbour lists during a parallel Add.
// A mutex per node cost 8 bytes a node, allocated afresh by every Add (at 40M nodes, 320 MB
// for each batch); nodes share stripes instead. No path holds two list locks at once, so
// sharing cannot deadlock, and with a few workers on 4,096 stripes two rarely meet.
const lockStripes = 1 << 12

// stripe is a mutex alone on its cache line, so workers locking neighbouring stripes do not
// contend for the line.
type stripe struct {
	sync.Mutex
	_ [56]byte
}

// builder holds the state shared by the insertion workers of one Add call.
type builder struct {
	g     *Graph
	locks []stripe   // node id's lists on every level are guarded by locks[id%lockStripes]; nil with one worker
	epMu  sync.Mutex // guards g.entry and g.maxLevel
}

// insertAll inserts nodes [from, to) and returns the end of the finished prefix.
func (g *Graph) insertAll(ctx context.Context, from, to int) (int, error) {
	b := &builder{g: g}
	workers := min(g.opts.Workers, to-from)
	if workers <= 1 { // no locks: nothing else touches the lists
		s := g.getScratch(to)
		defer g.scratch.Put(s)
		s.sizeBuild(g.dim)
		for id := from; id < to; id++ {
			if id%256 == 0 && ctx.Err() != nil {
				return id, ctx.Err()
			}
			b.insert(s, uint32(id))
		}
		return to, nil
	}
	b.locks = make([]stripe, lockStripes)
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := g.getScratch(to) // pooled: a build of many batches reuses the visited arrays
			defer g.scratch.Put(s)
			s.sizeBuild(g.dim)
			for {
				if ctx.Err() != nil {
					return
				}
				id := next.Add(1) - 1
				if id >= int64(to) {
					return
				}
				s.gen++
				if s.gen == 0 {
					clear(s.visited)
					s.gen = 1
				}
				b.insert(s, uint32(id))
			}
		})
	}
	wg.Wait()
	if done := int(next.Load()); done < to {
		return done, ctx.Err()
	}
	return to, nil
}

// insert links node id into the graph (the paper's INSERT, algorithm 1).
func (b *builder) insert(s *searchScratch, id uint32) {
	g := b.g
	q := g.nodeQuery(s.qv, id)
	lvl := int(g.levels[id])

	b.epMu.Lock()
	ep, top := g.entry, g.maxLevel
	if lvl <= top {
		b.epMu.Unlock()
	} else {
		// A new top node: hold epMu until it is linked, so no other insertion starts from an
		// entry point that is not yet reachable (hnswlib does the same).
		defer func() {
			g.entry, g.maxLevel = id, lvl
			b.epMu.Unlock()
		}()
	}

	cur, curS := ep, g.sim(q, ep)
	for l := top; l > lvl; l-- {
		cur, curS = b.greedy(s, q, cur, curS, l)
	}
	// Find the neighbours on every level top-down, then link bottom-up. Linking bottom-up matters
	// with parallel workers: once another insertion can reach this node on level l, its lists on
	// all lower levels are already filled, so a search descending through it never starts from an
	// empty list (which left nodes with a single, later overwritten, link: unreachable). With one
	// worker the order changes nothing: each level's search reads only that level's lists.
	start := min(lvl, top)
	for l := start; l >= 0; l-- {
		s.gen++
		if s.gen == 0 {
			clear(s.visited)
			s.gen = 1
		}
		s.visited[id] = s.gen // never link a node to itself
		w := b.searchLayer(s, q, cur, curS, l, g.opts.EfConstruction)
		s.levelSel[l] = g.selectNeighbors(s, w, g.m, s.levelSel[l][:0])
		cur, curS = w[0].id, w[0].score
	}
	for l := 0; l <= start; l++ {
		sel := s.levelSel[l]
		b.lock(id)
		lst := g.list(id, l)
		lst[0] = uint32(len(sel))
		for i, it := range sel {
			lst[1+i] = it.id
		}
		b.unlock(id)
		for _, it := range sel {
			b.link(s, it.id, id, it.score, l)
		}
	}
}

func (b *builder) lock(id uint32) {
	if b.locks != nil {
		b.locks[id%lockStripes].Lock()
	}
}

func (b *builder) unlock(id uint32) {
	if b.locks != nil {
		b.locks[id%lockStripes].Unlock()
	}
}

// greedy is Graph.greedy reading lists under their node's lock.
func (b *builder) greedy(s *searchScratch, q query, cur uint32, curS float32, l int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		for _, nb := range b.neighbors(s, cur, l) {
			if sc := b.g.sim(q, nb); sc > curS {
				cur, curS, changed = nb, sc, true
			}
		}
	}
	return cur, curS
}

// neighbors returns the list of id at level l: with one worker the list itself, with several a
// copy taken under the node's lock.
func (b *builder) neighbors(s *searchScratch, id uint32, l int) []uint32 {
	if b.locks == nil {
		lst := b.g.list(id, l)
		return lst[1 : 1+lst[0]]
	}
	b.lock(id)
	lst := b.g.list(id, l)
	s.ids = append(s.ids[:0], lst[1:1+lst[0]]...)
	b.unlock(id)
	return s.ids
}

// searchLayer is SEARCH-LAYER (algorithm 2). It includes deleted nodes:
// they are valid routes. It returns the found nodes sorted best first, in s.cand's backing array.
func (b *builder) searchLayer(s *searchScratch, q query, ep uint32, epS float32, l, ef int) []item {
	g := b.g
	vis, gen := s.visited, s.gen
	cand, res := s.cand[:0], s.res[:0]
	vis[ep] = gen
	cand.push(item{epS, ep})
	res.push(item{epS, ep})
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= ef && c.score < res[0].score {
			break
		}
		todo := s.todo[:0]
		for _, nb := range b.neighbors(s, c.id, l) {
			if vis[nb] == gen {
				continue
			}
			vis[nb] = gen
			todo = append(todo, nb)
			g.prefetchNode(nb)
		}
		s.todo = todo
		for _, nb := range todo {
			sc := g.sim(q, nb)
			if len(res) < ef || sc > res[0].score {
				cand.push(item{sc, nb})
				res.push(item{sc, nb})
				if len(res) > ef {
					res.pop()
				}
			}
		}
	}
	// Drain worst first into cand's array, reversed, so the result is best first.
	out := slices.Grow(cand[:0], len(res))[:len(res)]
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = res.pop()
	}
	s.cand, s.res = out, res
	return out
}

// selectNeighbors is the paper's heuristic (algorithm 4, without extending or keeping pruned
// candidates, as in hnswlib): walking candidates best first, keep c only if it is closer to the
// base than to every neighbour already kept. This spreads links across directions, which is what
// keeps clustered data navigable. cands must be sorted best first. s.dec is overwritten.
func (g *Graph) selectNeighbors(s *searchScratch, cands []item, m int, out []item) []item {
	if len(cands) <= m {
		return append(out, cands...)
	}
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		cv := g.nodeQuery(s.dec, c.id)
		good := true
		for _, r := range out {
			if g.sim(cv, r.id) > c.score {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}

// link adds the edge from -> to at level l, with score = sim(from, to). When from's list is full
// it is re-selected with the heuristic among the old neighbours and the new one. s.lv and s.dec
// are overwritten.
func (b *builder) link(s *searchScratch, from, to uint32, score float32, l int) {
	g := b.g
	maxN := g.m
	if l == 0 {
		maxN = g.m0
	}
	b.lock(from)
	defer b.unlock(from)
	lst := g.list(from, l)
	n := int(lst[0])
	if n < maxN {
		lst[1+n] = to
		lst[0]++
		return
	}
	fv := g.nodeQuery(s.lv, from)
	cands := make([]item, 0, n+1)
	cands = append(cands, item{score, to})
	for _, nb := range lst[1 : 1+n] {
		cands = append(cands, item{g.sim(fv, nb), nb})
	}
	slices.SortFunc(cands, func(a, b item) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.id) - int(b.id)
	})
	sel := g.selectNeighbors(s, cands, maxN, make([]item, 0, maxN))
	lst[0] = uint32(len(sel))
	for i, it := range sel {
		lst[1+i] = it.id
	}
}

// sizeBuild gives s the buffers a build decodes node vectors into.
func (s *searchScratch) sizeBuild(dim int) {
	for _, p := range []*[]float32{&s.qv, &s.dec, &s.lv} {
		*p = slices.Grow((*p)[:0], dim)[:dim]
	}
}
