package hnsw

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"
)

// Building from codes (Options.Build codes). A graph built on float32 vectors holds 4*dim bytes
// per vector in memory for as long as it is built: 40M passages at 256 dimensions are 40 GB.
// Built from codes, it holds one byte per dimension and two floats per vector instead:
//
//	x[d] ~ lo + step*c[d],  lo = min_d x[d], step = (max_d x[d] - lo) / 255,
//
// a range per vector, not per dimension (quant.go), because the per-dimension ranges need every
// vector before the first is coded, and a build sees them one batch at a time. The similarity
// of a float query q (the vector being inserted, which its Add call holds) to node x is then
//
//	q·x ~ lo*sum(q) + step*(q·c),
//
// one float-by-byte dot product (dotU8, as the mapped search); two stored nodes are compared by
// decoding one of them. The float vectors are written, normalised, to an unlinked file in
// Options.SpillDir as each batch arrives, in node order; Save reads them from there to write
// the graph file (which is the same as a float build's: the mapped search's codes are fitted
// then, per dimension, over all vectors), exact search scans them, and a search of the graph
// in memory rescores its best candidates with them, as a mapped search does.

// query is a float vector compared with nodes, with the sum of its components, which the
// similarity to a coded node needs.
type query struct {
	v   []float32
	sum float32
}

func newQuery(v []float32) query {
	var s float32
	for _, x := range v {
		s += x
	}
	return query{v: v, sum: s}
}

// encodeRange writes the codes of v into dst and returns its range (lo, step).
func encodeRange(dst []uint8, v []float32) (lo, step float32) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if hi > lo {
		step = (hi - lo) / 255
	}
	for d, x := range v {
		if step == 0 {
			dst[d] = 0
			continue
		}
		c := (x-lo)/step + 0.5
		dst[d] = uint8(min(max(c, 0), 255))
	}
	return lo, step
}

// sim is the similarity of q to node id: the dot product with its float vector, or, built
// from codes, its approximation from the codes.
func (g *Graph) sim(q query, id uint32) float32 {
	if g.bcodes == nil {
		return dot(q.v, g.vec(id))
	}
	o := int(id) * g.dim
	return g.brange[2*id]*q.sum + g.brange[2*id+1]*dotU8(q.v, g.bcodes[o:o+g.dim:o+g.dim])
}

// nodeQuery returns node id's vector as a query: its float vector when the graph holds them
// or the Add in progress does, its decoded codes (written into buf, len dim) otherwise.
func (g *Graph) nodeQuery(buf []float32, id uint32) query {
	if g.bcodes == nil {
		return query{v: g.vec(id)}
	}
	if i := int(id) - g.batchFirst; i >= 0 && (i+1)*g.dim <= len(g.batch) {
		return newQuery(g.batch[i*g.dim : (i+1)*g.dim])
	}
	o := int(id) * g.dim
	lo, step := g.brange[2*id], g.brange[2*id+1]
	for d, c := range g.bcodes[o : o+g.dim] {
		buf[d] = lo + step*float32(c)
	}
	return newQuery(buf)
}

// prefetchNode starts loading what sim reads of node nb.
func (g *Graph) prefetchNode(nb uint32) {
	if g.bcodes == nil {
		prefetch(unsafe.Pointer(&g.vecs[int(nb)*g.dim]), g.prefetchLines)
		return
	}
	prefetch(unsafe.Pointer(&g.bcodes[int(nb)*g.dim]), (g.dim+63)/64)
}

// floatFile is the file the float vectors are read from when they are not in memory: the
// mapped graph's file or the spill file of a graph built from codes; nil when in memory.
func (g *Graph) floatFile() *mapping {
	if g.mapped != nil {
		return g.mapped
	}
	return g.spill
}

// eachVec calls fn on the float vectors of all nodes, in blocks of consecutive nodes, from
// memory or from the file that holds them.
func (g *Graph) eachVec(fn func(first int, block []float32) error) error {
	n := len(g.keys)
	if f := g.floatFile(); f != nil {
		return f.eachVectors(n, g.dim, fn)
	}
	return fn(0, g.vecs[:n*g.dim])
}

// toCodes turns the graph into the built-from-codes form if Options.Build asks for it and it
// is not yet: it opens the spill file, writes the vectors already held (in memory or in the
// mapped file) to it and codes them, and releases the floats and the mapping. The codes and
// the lists read in have room for extra more nodes. g.mu must be held exclusively.
func (g *Graph) toCodes(extra int) error {
	if g.opts.Build != BuildCodes || g.spill != nil {
		return nil
	}
	dir := g.opts.SpillDir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, ".hnsw-vectors-*.f32")
	if err != nil {
		return fmt.Errorf("hnsw: creating the file of the float vectors: %w", err)
	}
	sp := &mapping{f: f, path: f.Name()}
	// Unlinked now, the file goes when it is closed (Close) or the process ends; where that
	// is refused (Windows), Close removes it.
	if os.Remove(f.Name()) == nil {
		sp.unlinked = true
	}
	n := len(g.keys)
	codes := make([]uint8, n*g.dim, (n+max(extra, 1))*g.dim)
	rng := make([]float32, 2*n, 2*(n+max(extra, 1)))
	err = g.eachVec(func(first int, block []float32) error {
		if _, err := f.WriteAt(asBytes(block), int64(first)*int64(g.dim)*4); err != nil {
			return fmt.Errorf("hnsw: writing float vectors to %s: %w", sp.path, err)
		}
		for j := 0; j*g.dim < len(block); j++ {
			id := first + j
			rng[2*id], rng[2*id+1] = encodeRange(codes[id*g.dim:(id+1)*g.dim], block[j*g.dim:(j+1)*g.dim])
		}
		return nil
	})
	if err != nil {
		sp.closeSpill()
		return err
	}
	if g.mapped != nil {
		g.level0 = cloneWithRoom(g.level0, extra*g.stride)
		err = g.mapped.close()
		g.mapped, g.codes, g.quant, g.bits, g.bitMeans = nil, nil, quantizer{}, nil, nil
	}
	g.vecs, g.spill, g.bcodes, g.brange = nil, sp, codes, rng
	return err
}

// spillBatch normalises a batch (under Cosine) into g.batch, which the insertion reads its
// queries from, and writes it to the spill file after the nodes before first.
func (g *Graph) spillBatch(first int, vecs [][]float32) error {
	buf := make([]float32, len(vecs)*g.dim)
	for i, v := range vecs {
		if g.opts.Metric == Cosine {
			normalizeInto(buf[i*g.dim:], v)
		} else {
			copy(buf[i*g.dim:], v)
		}
	}
	if _, err := g.spill.f.WriteAt(asBytes(buf), int64(first)*int64(g.dim)*4); err != nil {
		return fmt.Errorf("hnsw: writing float vectors to %s: %w", g.spill.path, err)
	}
	g.batch, g.batchFirst = buf, first
	return nil
}

// growCodes appends the codes and ranges of the batch in g.batch.
func (g *Graph) growCodes() {
	n := len(g.batch) / g.dim
	first := len(g.brange) / 2
	g.bcodes = slices.Grow(g.bcodes, n*g.dim)[:(first+n)*g.dim]
	g.brange = slices.Grow(g.brange, 2*n)[:2*(first+n)]
	for i := range n {
		id := first + i
		g.brange[2*id], g.brange[2*id+1] = encodeRange(g.bcodes[id*g.dim:(id+1)*g.dim], g.batch[i*g.dim:(i+1)*g.dim])
	}
}

// closeSpill closes the spill file, removing it if it could not be unlinked when created.
func (m *mapping) closeSpill() error {
	err := m.f.Close()
	if !m.unlinked {
		if rerr := os.Remove(m.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}

// searchBuilt is SearchFiltered on a graph built from codes, in memory: the walk scores nodes
// by their codes, and the best candidates are rescored with their float vectors read from the
// spill file, as searchCoded does. g.mu is held shared; q is normalised.
func (g *Graph) searchBuilt(s *searchScratch, q []float32, k, ef int, keep func(uint64) bool) ([]Result, error) {
	qq := newQuery(q)
	b := &builder{g: g}
	cur := g.entry
	curS := g.sim(qq, cur)
	for l := g.maxLevel; l > 0; l-- {
		cur, curS = b.greedy(s, qq, cur, curS, l)
	}
	vis, gen := s.visited, s.gen
	cand, res := s.cand[:0], s.res[:0]
	vis[cur] = gen
	cand.push(item{curS, cur})
	if g.admits(cur, keep) {
		res.push(item{curS, cur})
	}
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= ef && c.score < res[0].score {
			break
		}
		lst := g.list(c.id, 0)
		todo := s.ids[:0]
		for _, nb := range lst[1 : 1+lst[0]] {
			if vis[nb] == gen {
				continue
			}
			vis[nb] = gen
			todo = append(todo, nb)
			g.prefetchNode(nb)
		}
		s.ids = todo
		for _, nb := range todo {
			sc := g.sim(qq, nb)
			if len(res) < ef || sc > res[0].score {
				cand.push(item{sc, nb})
				if g.admits(nb, keep) {
					res.push(item{sc, nb})
					if len(res) > ef {
						res.pop()
					}
				}
			}
		}
	}
	cands := slices.Grow(s.ids[:0], len(res))[:len(res)]
	for i := len(cands) - 1; i >= 0; i-- {
		cands[i] = res.pop().id
	}
	s.cand, s.res, s.ids = cand[:0], res[:0], cands[:0]
	return g.rescoreFloat(s, q, cands, k)
}

// SetBuild changes what the next Add builds from (Options.Build, BuildFloat or BuildCodes)
// and where a graph built from codes keeps its float vectors (Options.SpillDir), so a graph
// loaded from its file can be extended from codes: its vectors move to the spill file at the
// next Add. A graph already built from codes keeps that form.
func (g *Graph) SetBuild(build, spillDir string) error {
	o := g.opts
	o.Build, o.SpillDir = build, spillDir
	if err := o.Validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	g.opts.Build, g.opts.SpillDir = build, spillDir
	return nil
}
