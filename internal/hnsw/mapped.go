package hnsw

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"unsafe"
)

// LoadOptions chooses how LoadWith opens a graph file. The zero value reads everything into
// memory, as Load does.
type LoadOptions struct {
	// Mapped memory-maps the level-0 lists and the one-byte codes of a version-2 file instead
	// of reading the graph into memory. Searches walk the graph over the codes and rescore the
	// best candidates with the float vectors, read from the file (through the page cache, not
	// mapped) a few per query; resident memory is then about the lists and codes the searches
	// touch plus 13 bytes a node (keys, levels, upper offsets) and a map entry for each live
	// key that is not its node's id (keys.go: none after a build in key order). Loading still
	// reads the whole file once to verify its checksum (through the page cache, not the
	// mapping) and every level-0 list to check it (their pages are released after). Add on a
	// mapped graph first reads the float vectors and lists into memory (see Add); Search,
	// SearchExact, Delete and Save work on the mapped form. Version-1 files, empty graphs and
	// hosts without mmap load in memory.
	Mapped bool
	// Rescore is how many of the best candidates (by code score) a mapped search rescores with
	// the float vectors, at least k and at most ef. Default (0): 2*k. On 500,000 x 384 clustered
	// vectors, recall@10 was the same with 20 as with all ef candidates at ef 128..256 (the
	// codes misorder only near-ties), and every rescored candidate costs a read of its vector.
	Rescore int
	// BinaryRescore is how a graph with binary codes (Options.Codes) rescores the candidates
	// of its Hamming walk: RescoreInt8 (the default, ""), all ef with the mapped one-byte
	// codes and then Rescore of those with the float vectors, or RescoreFloat, all ef with
	// the float vectors read from the file. Float rescoring never touches the codes, so the
	// process keeps only the bits and lists resident (the vectors it reads stay in the page
	// cache, outside it), at the cost of ef reads a query.
	BinaryRescore string
	// BinaryWalk is how a graph with binary codes scores nodes in its walk: WalkAsymmetric
	// (the default, ""), by the sum of the float query over the node's set bits (asymScore),
	// or WalkHamming, by the Hamming distance between the node's bits and the query's. On
	// 100,000 x 256 (M 16, efC 200, 1,000 queries, int8 then float rescoring) the asymmetric
	// walk raised recall@10 from 0.7541 to 0.8910 at ef 256 on the topic fixture's vectors and
	// from 0.9130 to 0.9720 on clustered Gaussians, for 15 to 21% fewer queries a CPU-second at
	// equal ef: the query keeps its magnitudes instead of being rounded to bits too.
	BinaryWalk string
}

// The values of LoadOptions.BinaryWalk.
const (
	WalkHamming    = "hamming"
	WalkAsymmetric = "asymmetric"
)

// The values of LoadOptions.BinaryRescore.
const (
	RescoreInt8  = "int8"
	RescoreFloat = "float"
)

// Validate reports an invalid field.
func (o LoadOptions) Validate() error {
	if o.Rescore < 0 {
		return fmt.Errorf("hnsw: Rescore %d must not be negative", o.Rescore)
	}
	if o.BinaryRescore != "" && o.BinaryRescore != RescoreInt8 && o.BinaryRescore != RescoreFloat {
		return fmt.Errorf("hnsw: BinaryRescore %q: want %s or %s", o.BinaryRescore, RescoreInt8, RescoreFloat)
	}
	if o.BinaryWalk != "" && o.BinaryWalk != WalkHamming && o.BinaryWalk != WalkAsymmetric {
		return fmt.Errorf("hnsw: BinaryWalk %q: want %s or %s", o.BinaryWalk, WalkHamming, WalkAsymmetric)
	}
	return nil
}

// ErrClosed reports a search on a graph after Close.
var ErrClosed = errors.New("hnsw: graph is closed")

// mapping is the open file behind a mapped graph.
type mapping struct {
	data   []byte   // the whole file, mapped read-only
	f      *os.File // kept open for reading float vectors
	vecOff int64    // offset of the vectors section
	path   string
	// unlinked says a spill file (buildcodes.go) was removed when created.
	unlinked bool
}

// LoadWith reads a graph saved with Save, mapped or in memory as o says.
func LoadWith(path string, o LoadOptions) (*Graph, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if !o.Mapped || !canMap || !littleEndian() {
		return Load(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hnsw: loading: %w", err)
	}
	g, err := loadMapped(f, o)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	if g.mapped == nil { // read in memory
		f.Close()
	} else {
		g.mapped.path = path
	}
	return g, nil
}

func loadMapped(f *os.File, o LoadOptions) (*Graph, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("hnsw: %w", err)
	}
	r := &sizedReader{r: bufio.NewReaderSize(f, 1<<20), left: st.Size()}
	g, h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	if h.Version == 1 || h.Nodes == 0 {
		return g, g.readBody(r, h, false)
	}
	if err := g.readBody(r, h, true); err != nil {
		return nil, err
	}
	data, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("hnsw: mapping: %w", err)
	}
	n := int(h.Nodes)
	secs, _ := layoutV2(n, g.dim, g.stride, h.UpperLen, g.opts.Codes == CodesBinary)
	l0 := secs[secLevel0]
	g.level0 = unsafe.Slice((*uint32)(unsafe.Pointer(&data[l0.off])), n*g.stride)
	c := secs[secCodes]
	g.codes = data[c.off : c.off+c.size : c.off+c.size]
	if b := secs[secBits]; b.size > 0 {
		g.bits = unsafe.Slice((*uint64)(unsafe.Pointer(&data[b.off])), b.size/8)
	}
	g.mapped = &mapping{data: data, f: f, vecOff: secs[secVectors].off}
	g.rescore = o.Rescore
	g.floatOnly = o.BinaryRescore == RescoreFloat
	g.binaryWalk = o.BinaryWalk
	if err := g.checkStructure(h.Deleted); err != nil {
		unmapFile(data)
		return nil, err
	}
	return g, nil
}

// releaseLists drops the pages of the level-0 lists of nodes from..to-1 of a mapped graph from
// the process, once checkStructure has read them through the mapping: they stayed resident
// (1,289,152 kB of a 10M-node graph's file after `kairos serve` had opened it, before any
// query). Searches fault back the lists they walk. A graph in memory is left as it is.
func (g *Graph) releaseLists(from, to int) {
	if g.mapped == nil || to <= from {
		return
	}
	data := g.mapped.data
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	start := uintptr(unsafe.Pointer(&g.level0[from*g.stride])) - base
	end := start + uintptr((to-from)*g.stride*4)
	start &^= uintptr(os.Getpagesize() - 1) // madvise takes whole pages from a page boundary
	releasePages(data[start:end])
}

// Mapped reports whether the graph searches a memory-mapped file (see LoadOptions.Mapped).
func (g *Graph) Mapped() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.mapped != nil
}

// Close releases the file of a mapped graph; searches afterwards fail with ErrClosed. It is a
// no-op on a graph in memory apart from that.
func (g *Graph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.spill != nil {
		err := g.spill.closeSpill()
		g.spill, g.bcodes, g.brange = nil, nil, nil
		return err
	}
	if g.mapped == nil {
		return nil
	}
	err := g.mapped.close()
	g.mapped, g.codes, g.bits, g.level0 = nil, nil, nil, nil
	return err
}

func (m *mapping) close() error {
	err := unmapFile(m.data)
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// vector reads node id's float vector from the file into dst (len dim).
func (m *mapping) vector(id uint32, dst []float32) error {
	b := asBytes(dst)
	if _, err := m.f.ReadAt(b, m.vecOff+int64(id)*int64(len(b))); err != nil {
		return fmt.Errorf("hnsw: reading vector of node %d from %s: %w", id, m.path, err)
	}
	return nil
}

// eachVectors reads the first n float vectors from the file in blocks of consecutive nodes.
func (m *mapping) eachVectors(n, dim int, fn func(first int, block []float32) error) error {
	per := max(1, (1<<20)/(4*dim))
	buf := make([]float32, per*dim)
	for first := 0; first < n; first += per {
		cnt := min(per, n-first)
		b := asBytes(buf[:cnt*dim])
		if _, err := m.f.ReadAt(b, m.vecOff+int64(first)*int64(dim)*4); err != nil {
			return fmt.Errorf("hnsw: reading vectors %d.. from %s: %w", first, m.path, err)
		}
		if err := fn(first, buf[:cnt*dim]); err != nil {
			return err
		}
	}
	return nil
}

// thaw turns a mapped graph into the in-memory form (float vectors and lists read into memory,
// the mapping released, with room for extra more nodes), so it can be extended. g.mu must be
// held exclusively.
func (g *Graph) thaw(extra int) error {
	if g.mapped == nil {
		return nil
	}
	n := len(g.keys)
	vecs := make([]float32, n*g.dim, (n+extra)*g.dim)
	err := g.mapped.eachVectors(n, g.dim, func(first int, block []float32) error {
		copy(vecs[first*g.dim:], block)
		return nil
	})
	if err != nil {
		return err
	}
	g.vecs = vecs
	g.level0 = cloneWithRoom(g.level0, extra*g.stride)
	err = g.mapped.close()
	g.mapped, g.codes, g.quant, g.bits, g.bitMeans = nil, nil, quantizer{}, nil, nil
	return err
}
