package hnsw

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"unsafe"
)

// Binary codes (Options.Codes binary): one bit per dimension, set where the vector is above that
// dimension's mean over all stored vectors. Thresholding at the mean rather than at zero matters
// for embeddings: their dimensions are rarely centred (a static model's vectors, means of
// token rows, all lean the same way), and a dimension that is positive for every vector carries
// no bit of information at zero. The query is thresholded the same way, and the walk scores a
// node by minus the Hamming distance between the two bit strings: ceil(dim/64) XORs and
// POPCNTs, 32 bytes a node at 256 dimensions against 256 for the one-byte codes. Hamming
// distance only orders candidates coarsely, so the walk's ef best are rescored with the
// one-byte codes and the best of those with the float vectors (searchBinary).

// fitMeans returns the per-dimension means of n vectors read through vec.
func fitMeans(dim, n int, vec func(i int) []float32) []float32 {
	means, _ := fitMeansEach(dim, func(fn func(int, []float32) error) error {
		for i := range n {
			if err := fn(i, vec(i)[:dim]); err != nil {
				return err
			}
		}
		return nil
	})
	return means
}

// fitMeansEach is fitMeans over vectors given in blocks of consecutive vectors (Graph.eachVec).
func fitMeansEach(dim int, each func(fn func(first int, block []float32) error) error) ([]float32, error) {
	sum := make([]float64, dim)
	n := 0
	err := each(func(_ int, block []float32) error {
		for o := 0; o+dim <= len(block); o += dim {
			for d, x := range block[o : o+dim] {
				sum[d] += float64(x)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	means := make([]float32, dim)
	if n > 0 {
		for d, s := range sum {
			means[d] = float32(s / float64(n))
		}
	}
	return means, nil
}

// binarize writes the bits of v (above means or not) into dst (len words(len(v))).
func binarize(dst []uint64, v, means []float32) {
	clear(dst)
	for d, x := range v {
		if x > means[d] {
			dst[d/64] |= 1 << (d % 64)
		}
	}
}

// hamming is the number of differing bits of a and b (len(b) >= len(a)).
func hamming(a, b []uint64) int {
	b = b[:len(a)]
	n := 0
	for i, x := range a {
		n += bits.OnesCount64(x ^ b[i])
	}
	return n
}

// asymTable fills lut (words(len(q))*8 tables of 256) for asymScore: entry 256*k+v is the sum
// of q over the dimensions 8k..8k+7 whose bit is set in the byte v. Each entry adds one
// dimension to an entry already filled (v without its lowest bit), so a 256-d query costs
// 8,192 additions.
func asymTable(lut []float32, q []float32) {
	for k := range len(lut) / 256 {
		t := lut[256*k : 256*(k+1)]
		t[0] = 0
		for v := 1; v < 256; v++ {
			d := 8*k + bits.TrailingZeros8(uint8(v))
			x := float32(0)
			if d < len(q) {
				x = q[d]
			}
			t[v] = t[v&(v-1)] + x
		}
	}
}

// asymScore is the asymmetric score of a node's bits: the sum of the float query over the
// dimensions where the node is above its dimension's mean. With a node's coordinates taken as
// their mean plus or minus one spread, that ranks nodes as q·x does, up to a constant; the
// query keeps its floats, where a Hamming walk rounds it to bits too. 8 table reads a word.
func asymScore(lut []float32, b []uint64) float32 {
	var s float32
	for w, x := range b {
		t := lut[w*2048 : w*2048+2048 : w*2048+2048]
		s += t[x&0xff] + t[256+(x>>8&0xff)] + t[512+(x>>16&0xff)] + t[768+(x>>24&0xff)] +
			t[1024+(x>>32&0xff)] + t[1280+(x>>40&0xff)] + t[1536+(x>>48&0xff)] + t[1792+(x>>56)]
	}
	return s
}

// binScore is a binary walk's score of node id: asymmetric when the search prepared s.lut,
// else minus the Hamming distance to the query's bits.
func (g *Graph) binScore(s *searchScratch, id uint32) float32 {
	if s.lut != nil {
		return asymScore(s.lut, g.bitsOf(id))
	}
	return -float32(hamming(s.qb, g.bitsOf(id)))
}

// bitsOf returns node id's bits (mapped binary graphs).
func (g *Graph) bitsOf(id uint32) []uint64 {
	w := words(g.dim)
	o := int(id) * w
	return g.bits[o : o+w : o+w]
}

// writeBits writes the bits of every node, from the mapped file or computed in chunks from the
// float vectors.
func (g *Graph) writeBits(w io.Writer, means []float32) error {
	n, nw := len(g.keys), words(g.dim)
	if g.bits != nil {
		return writeSection(w, g.bits[:n*nw])
	}
	const chunk = 4096
	buf := make([]uint64, chunk*nw)
	return g.eachVec(func(_ int, block []float32) error {
		for len(block) > 0 {
			cnt := min(chunk, len(block)/g.dim)
			for j := range cnt {
				binarize(buf[j*nw:(j+1)*nw], block[j*g.dim:(j+1)*g.dim], means)
			}
			if err := writeSection(w, buf[:cnt*nw]); err != nil {
				return err
			}
			block = block[cnt*g.dim:]
		}
		return nil
	})
}

// searchBinary is SearchFiltered on a mapped graph with binary codes: the walk scores nodes by
// their bits (binScore: asymmetrically, or by Hamming distance with WalkHamming); its ef best are rescored with the one-byte codes, and the best of those
// (LoadOptions.Rescore, default 2*k) with the float vectors read from the file, so the scores
// returned are exact dot products; with LoadOptions.BinaryRescore float, all ef candidates
// go straight to the float vectors. g.mu is held shared; q is normalised.
func (g *Graph) searchBinary(s *searchScratch, q []float32, k, ef int, keep func(uint64) bool) ([]Result, error) {
	nw := words(g.dim)
	s.qb = slices.Grow(s.qb[:0], nw)[:nw]
	binarize(s.qb, q, g.bitMeans)
	s.lut = nil
	if g.binaryWalk != WalkHamming {
		s.lutBuf = slices.Grow(s.lutBuf[:0], nw*2048)[:nw*2048]
		s.lut = s.lutBuf
		asymTable(s.lut, q)
	}

	cur := g.entry
	curS := g.binScore(s, cur)
	for l := g.maxLevel; l > 0; l-- {
		cur, curS = g.greedyBinary(s, cur, curS, l)
	}
	g.searchLevel0Binary(s, cur, curS, ef, keep)

	if g.floatOnly { // every candidate of the walk with its float vector
		res := s.res
		ids := slices.Grow(s.ids[:0], len(res))[:len(res)]
		for i := len(ids) - 1; i >= 0; i-- {
			ids[i] = res.pop().id
		}
		s.res, s.ids = res[:0], ids[:0]
		return g.rescoreFloatN(s, q, ids, k, len(ids))
	}
	// Rescore every candidate of the walk with the codes, best first.
	s.qs = slices.Grow(s.qs[:0], g.dim)[:g.dim]
	qs := s.qs
	c0 := g.quant.prepare(qs, q)
	res := s.res
	cands := s.cand[:0]
	for len(res) > 0 {
		id := res.pop().id
		cands = append(cands, item{c0 + dotU8(qs, g.code(id)), id})
	}
	s.res = res[:0]
	slices.SortFunc(cands, func(a, b item) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.id) - int(b.id)
	})
	ids := s.ids[:0]
	for _, c := range cands {
		ids = append(ids, c.id)
	}
	s.cand, s.ids = cands[:0], ids[:0]
	return g.rescoreFloat(s, q, ids, k)
}

// greedyBinary is greedy over the bits.
func (g *Graph) greedyBinary(s *searchScratch, cur uint32, curS float32, l int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		lst := g.list(cur, l)
		for _, nb := range lst[1 : 1+lst[0]] {
			if sc := g.binScore(s, nb); sc > curS {
				cur, curS, changed = nb, sc, true
			}
		}
	}
	return cur, curS
}

// searchLevel0Binary is searchLevel0 over the bits; it leaves the ef best admitted nodes by
// binScore in s.res.
func (g *Graph) searchLevel0Binary(s *searchScratch, ep uint32, epS float32, ef int, keep func(uint64) bool) {
	vis, gen := s.visited, s.gen
	cand, res := s.cand[:0], s.res[:0]
	nw := len(s.qb)
	lines := (nw*8 + 63) / 64
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
			prefetch(unsafe.Pointer(&g.bits[int(nb)*nw]), lines)
		}
		s.ids = todo
		for _, nb := range todo {
			sc := g.binScore(s, nb)
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

// RescoresWithFloatsOnly reports whether a binary walk's candidates go straight to the float
// vectors (LoadOptions.BinaryRescore float on a mapped graph with binary codes).
func (g *Graph) RescoresWithFloatsOnly() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.floatOnly && g.bits != nil
}

// SetCodes changes the compact codes that the next Save writes (Options.Codes: CodesInt8 or
// CodesBinary), so a graph can be re-saved with other codes without being rebuilt. The codes
// are computed from the float vectors, so a mapped graph must first be read into memory: it is
// refused here.
func (g *Graph) SetCodes(codes string) error {
	o := g.opts
	o.Codes = codes
	if err := o.Validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mapped != nil || g.closed {
		return fmt.Errorf("hnsw: SetCodes on a mapped or closed graph")
	}
	o.SetDefaults()
	g.opts.Codes = o.Codes
	return nil
}
