package hnsw

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// maxLevels caps a node's level. With M >= 2 a level above 31 has probability below 2^-31 per node;
// the cap only guards against a degenerate random draw.
const maxLevels = 32

// Result is one search hit.
type Result struct {
	Key   uint64
	Score float32 // similarity: dot product (cosine under the Cosine metric); higher is better
}

// ErrDim reports a vector whose length is not the index dimension.
var ErrDim = errors.New("hnsw: wrong vector dimension")

// Graph is an HNSW index. Create it with New or Read; the zero value is not usable.
type Graph struct {
	// mu orders mutation against search: Add and Delete hold it exclusively, Search shares it.
	mu sync.RWMutex

	dim    int
	opts   Options
	m, m0  int     // max neighbours on levels >= 1 and on level 0
	mult   float64 // level multiplier 1/ln(M)
	stride int     // level-0 list size in uint32s: 1 count + m0 ids

	prefetchLines int // cache lines of each neighbour vector prefetched during search

	vecs     []float32 // node i's vector is vecs[i*dim : (i+1)*dim]
	keys     []uint64  // node id -> key
	levels   []uint8   // node id -> top level
	upperOff []uint32  // node id -> offset of its level-1 list in upper (levels >= 1 only)
	level0   []uint32  // node i's level-0 list is level0[i*stride:], first slot the count
	upper    []uint32  // lists for levels >= 1, each (m+1) uint32s, per node consecutive levels
	deleted  []uint64  // tombstone bitset by node id
	nDeleted int
	moved    map[uint64]uint32 // live key -> node id, for the keys that are not their node's id (keys.go)

	entry    uint32 // entry point node id
	maxLevel int    // level of the entry point; -1 when empty

	scratch sync.Pool // *searchScratch

	// A mapped graph (LoadWith, LoadOptions.Mapped) has no vecs: level0 and codes are views of
	// the mapped file, and the float vectors are read from it on demand.
	codes []uint8   // node i's codes are codes[i*dim : (i+1)*dim]
	quant quantizer // the codes' per-dimension ranges
	// With Options.Codes binary, node i's bits are bits[i*words(dim):], set where the vector
	// is above bitMeans (binary.go); the walk uses them instead of the codes.
	bits     []uint64
	bitMeans []float32
	mapped   *mapping // nil in memory
	rescore  int      // LoadOptions.Rescore
	// floatOnly (LoadOptions.BinaryRescore float) rescores a binary walk's candidates with
	// the float vectors only.
	floatOnly bool
	// binaryWalk (LoadOptions.BinaryWalk): WalkHamming scores a binary walk's nodes by
	// Hamming distance; anything else, asymmetrically.
	binaryWalk string
	closed     bool // set by Close

	// A graph built from codes (Options.Build codes, buildcodes.go) has no vecs: node i's
	// codes are bcodes[i*dim:], its range brange[2i] (lo) and brange[2i+1] (step), and the
	// float vectors are in the spill file. batch holds the normalised vectors of the Add in
	// progress, nodes batchFirst on.
	bcodes     []uint8
	brange     []float32
	spill      *mapping
	batch      []float32
	batchFirst int

	// deferRepair (DeferRepair) makes Add leave the repair pass to Repair or WriteTo;
	// unrepaired says an Add has done so since the last pass (or MarkUnrepaired was called).
	deferRepair, unrepaired bool
	// onRepair (OnRepair) hears how many of the nodes it checks the repair pass has checked.
	onRepair func(checked, total int)
}

// New returns an empty graph for vectors of dimension dim.
func New(dim int, opts Options) (*Graph, error) {
	if dim < 1 || dim > maxDim {
		return nil, fmt.Errorf("hnsw: dimension %d out of range 1..%d", dim, maxDim)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.SetDefaults()
	g := &Graph{dim: dim, opts: opts, maxLevel: -1}
	g.derive()
	return g, nil
}

// derive sets the fields computed from options.
func (g *Graph) derive() {
	g.m = g.opts.M
	g.m0 = 2 * g.opts.M
	g.mult = 1 / math.Log(float64(g.opts.M))
	g.stride = g.m0 + 1
	g.prefetchLines = min((g.dim*4+63)/64, 48) // whole vector: measured best at dim 384
}

// Dim is the vector dimension.
func (g *Graph) Dim() int { return g.dim }

// Options returns the options the graph was built with, defaults filled in.
func (g *Graph) Options() Options { return g.opts }

// Len is the number of nodes, deleted ones included.
func (g *Graph) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.keys)
}

// Live is the number of nodes not deleted.
func (g *Graph) Live() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.keys) - g.nDeleted
}

// Contains reports whether key is present and not deleted.
func (g *Graph) Contains(key uint64) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.lookup(key)
	return ok
}

// Vector returns a copy of the vector stored under a live key (normalised under Cosine), so a
// graph can be rebuilt without the encoder (index compaction). A mapped graph reads it from its
// file; a failed read reports the key as absent.
func (g *Graph) Vector(key uint64) ([]float32, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	id, ok := g.lookup(key)
	if !ok || g.closed {
		return nil, false
	}
	if f := g.floatFile(); f != nil {
		v := make([]float32, g.dim)
		if f.vector(id, v) != nil {
			return nil, false
		}
		return v, true
	}
	return append([]float32(nil), g.vec(id)...), true
}

// Delete tombstones key: it is never returned again but its node still routes searches, so recall
// of the remaining keys holds. It reports whether key was live. A deleted key may be added again.
func (g *Graph) Delete(key uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.lookup(key)
	if !ok {
		return false
	}
	g.unindex(key)
	g.deleted[id/64] |= 1 << (id % 64)
	g.nDeleted++
	return true
}

func (g *Graph) isDeleted(id uint32) bool {
	return g.deleted[id/64]&(1<<(id%64)) != 0
}

// code returns node id's one-byte codes (mapped graphs).
func (g *Graph) code(id uint32) []uint8 {
	o := int(id) * g.dim
	return g.codes[o : o+g.dim : o+g.dim]
}

func (g *Graph) vec(id uint32) []float32 {
	o := int(id) * g.dim
	return g.vecs[o : o+g.dim : o+g.dim]
}

// list returns the neighbour list of id at level l, count slot first.
func (g *Graph) list(id uint32, l int) []uint32 {
	if l == 0 {
		o := int(id) * g.stride
		return g.level0[o : o+g.stride : o+g.stride]
	}
	o := int(g.upperOff[id]) + (l-1)*(g.m+1)
	return g.upper[o : o+g.m+1 : o+g.m+1]
}

// randomLevel draws the level of node id from a hash of (Seed, id), so levels do not depend on the
// order or batching of insertion: floor(-ln(U) / ln(M)), the paper's distribution.
func (g *Graph) randomLevel(id uint32) uint8 {
	x := splitmix64(uint64(g.opts.Seed) ^ (uint64(id)+1)*0x9e3779b97f4a7c15)
	u := (float64(x>>11) + 1) / (1 << 53) // (0, 1]
	l := int(-math.Log(u) * g.mult)
	if l >= maxLevels {
		l = maxLevels - 1
	}
	return uint8(l)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
