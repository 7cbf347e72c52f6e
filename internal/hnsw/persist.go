package hnsw

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"slices"
	"unsafe"

	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// On-disk format, all integers little-endian. Save writes version 2 (persist_v2.go: the same
// header, then page-aligned sections with one-byte codes, so the file can be mapped), or version
// 3 for a graph with binary codes (version 2 plus two sections, the bits and their thresholds, so
// a build without binary codes writes the same bytes as before); Read and Load still read
// version 1:
//
//	header (80 bytes): magic "KAIHNSW\x00", version u32, dim u32, M u32, EfConstruction u32,
//	  EfSearch u32, metric u32, seed i64, nodes u64, upper-list length u64, entry u32,
//	  max level i32, deleted count u64, codes u32 (0 int8, 1 binary; 0 before version 3),
//	  CRC-32C of the preceding header bytes u32
//	body: vectors f32[nodes*dim], keys u64[nodes], levels u8[nodes], upper offsets u32[nodes],
//	  level-0 lists u32[nodes*(2M+1)], upper lists u32[upper length], tombstones u64[ceil(nodes/64)]
//	trailer: CRC-32C of the body u32
//
// The header has its own checksum so that a corrupt size field is caught before anything is
// allocated from it. Each body section is read straight into its final typed slice.
const (
	formatVersion = 2 // written; version 1 is still read
	binaryVersion = 3 // written for Options.Codes binary
	headerSize    = 80
	maxDim        = 1 << 16
	maxNodes      = 1<<31 - 1
)

var (
	magic    = [8]byte{'K', 'A', 'I', 'H', 'N', 'S', 'W', 0}
	crcTable = crc32.MakeTable(crc32.Castagnoli)
)

// ErrCorrupt marks a file that fails its checksum or structural checks.
var ErrCorrupt = errors.New("hnsw: index file corrupt")

type header struct {
	Magic            [8]byte
	Version, Dim, M  uint32
	EfConstruction   uint32
	EfSearch, Metric uint32
	Seed             int64
	Nodes, UpperLen  uint64
	Entry            uint32
	MaxLevel         int32
	Deleted          uint64
	Codes, CRC       uint32
}

// WriteTo writes the graph in the versioned, checksummed format, after the repair pass that
// DeferRepair put off. It blocks Add and Delete (not Search) while it runs.
func (g *Graph) WriteTo(w io.Writer) (int64, error) {
	return g.writeTo(w, true)
}

// writeTo is WriteTo, with the repair pass only when repair is set (SaveCheckpoint's is not).
func (g *Graph) writeTo(w io.Writer, repair bool) (int64, error) {
	if repair { // what is searched is always repaired
		if _, err := g.Repair(); err != nil {
			return 0, err
		}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return 0, ErrClosed
	}
	n := len(g.keys)
	h := header{
		Magic: magic, Version: formatVersion, Dim: uint32(g.dim), M: uint32(g.opts.M),
		EfConstruction: uint32(g.opts.EfConstruction), EfSearch: uint32(g.opts.EfSearch),
		Metric: uint32(g.opts.Metric), Seed: g.opts.Seed, Nodes: uint64(n),
		UpperLen: uint64(len(g.upper)), Entry: g.entry, MaxLevel: int32(g.maxLevel),
		Deleted: uint64(g.nDeleted),
	}
	if g.opts.Codes == CodesBinary {
		h.Version, h.Codes = binaryVersion, 1
	}
	hb, _ := binary.Append(nil, binary.LittleEndian, &h)
	h.CRC = crc32.Checksum(hb[:headerSize-4], crcTable)
	binary.LittleEndian.PutUint32(hb[headerSize-4:], h.CRC)
	cw := &crcWriter{w: w, h: crc32.New(crcTable)}
	if _, err := w.Write(hb); err != nil {
		return 0, fmt.Errorf("hnsw: writing header: %w", err)
	}
	cw.n = headerSize
	if err := g.writeBodyV2(cw); err != nil {
		return cw.n, err
	}
	sum := binary.LittleEndian.AppendUint32(nil, cw.h.Sum32())
	if _, err := w.Write(sum); err != nil {
		return cw.n, fmt.Errorf("hnsw: writing checksum: %w", err)
	}
	return cw.n + 4, nil
}

func words(n int) int { return (n + 63) / 64 }

// Save writes the graph to path atomically (see internal/atomicfile): a crash leaves either the
// old file or the new one.
func (g *Graph) Save(path string) error {
	_, _, err := g.SaveSum(path)
	return err
}

// SaveSum is Save that also returns the size and sha256 of what it wrote, hashed on the way
// out so that a caller recording checksums need not read the file back.
func (g *Graph) SaveSum(path string) (int64, [sha256.Size]byte, error) {
	return g.saveSum(path, true)
}

// SaveCheckpoint is SaveSum without the repair pass, for a build's checkpoint: a file that is
// only read to go on building, never searched. The pass self-searches every node with few
// in-links, which made the build stand still at each checkpoint (`kairos index` of 2M
// passages, 256-d: about 75 s at 1.2M vectors, 13.5 s without the pass). The graph stays
// marked for the pass; a graph read back from such a file must be marked again
// (MarkUnrepaired) so that the build's final Save runs it over every node.
func (g *Graph) SaveCheckpoint(path string) (int64, [sha256.Size]byte, error) {
	return g.saveSum(path, false)
}

func (g *Graph) saveSum(path string, repair bool) (int64, [sha256.Size]byte, error) {
	var werr error // the graph's own error; atomicfile's errors already name path
	var size int64
	h := sha256.New()
	err := atomicfile.Write(path, atomicfile.Options{}, func(w io.Writer) error {
		size, werr = g.writeTo(io.MultiWriter(w, h), repair)
		return werr
	})
	var sum [sha256.Size]byte
	if werr != nil {
		return 0, sum, fmt.Errorf("hnsw: saving %s: %w", path, werr)
	}
	if err != nil {
		return 0, sum, fmt.Errorf("hnsw: %w", err)
	}
	h.Sum(sum[:0])
	return size, sum, nil
}

// Load reads a graph saved with Save or WriteTo.
func Load(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hnsw: loading: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("hnsw: loading: %w", err)
	}
	g, err := Read(&sizedReader{r: bufio.NewReaderSize(f, 1<<20), left: st.Size()})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return g, nil
}

// sizedReader tells Read how many bytes remain (Len), so Load rejects a truncated file before
// allocating for it, even through a bufio.Reader.
type sizedReader struct {
	r    io.Reader
	left int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}

func (s *sizedReader) Len() int { return int(s.left) }

// Read reads a graph written by WriteTo. It verifies the header and body checksums and the
// structure (every neighbour id in range, list counts within M, levels consistent), so a corrupt
// or truncated input yields an error, never a panic or a bad graph. When r reports its remaining
// size (Len() int, like *bytes.Reader), a size mismatch is reported before any allocation.
// The graph's Workers option is reset to its default.
func Read(r io.Reader) (*Graph, error) {
	g, h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	if err := g.readBody(r, h, false); err != nil {
		return nil, err
	}
	return g, nil
}

// readHeader reads and checks the header and returns an empty graph with its options.
func readHeader(r io.Reader) (*Graph, *header, error) {
	hb := make([]byte, headerSize)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, nil, fmt.Errorf("hnsw: reading header: %w", truncated(err))
	}
	var h header
	if _, err := binary.Decode(hb, binary.LittleEndian, &h); err != nil {
		return nil, nil, fmt.Errorf("hnsw: decoding header: %w", err)
	}
	if h.Magic != magic {
		return nil, nil, fmt.Errorf("hnsw: not a Kairos HNSW file (magic %q)", h.Magic[:])
	}
	if h.Version < 1 || h.Version > binaryVersion {
		return nil, nil, fmt.Errorf("hnsw: unsupported format version %d (this build reads 1 to %d)", h.Version, binaryVersion)
	}
	if got := crc32.Checksum(hb[:headerSize-4], crcTable); got != h.CRC {
		return nil, nil, fmt.Errorf("%w: header checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, h.CRC, got)
	}
	g, err := graphFromHeader(&h)
	if err != nil {
		return nil, nil, err
	}
	return g, &h, nil
}

// readBody reads the body and trailer after the header. Mapped (version 2 only), the level-0
// lists, codes and vectors are checksummed but not kept, and the structure is left for the
// caller to check once they are mapped.
func (g *Graph) readBody(r io.Reader, h *header, mapped bool) error {
	cr := &crcReader{r: r, h: crc32.New(crcTable), n: headerSize}
	var err error
	if h.Version == 1 {
		err = g.readBodyV1(cr, h)
	} else {
		err = g.readBodyV2(cr, h, mapped)
	}
	if err != nil {
		return err
	}
	if err := readTrailer(cr); err != nil {
		return err
	}
	if mapped {
		return nil
	}
	return g.checkStructure(h.Deleted)
}

// readTrailer reads the body checksum and compares it with what cr has seen.
func readTrailer(cr *crcReader) error {
	want := cr.h.Sum32()
	var tb [4]byte
	if _, err := io.ReadFull(cr.r, tb[:]); err != nil {
		return fmt.Errorf("hnsw: reading checksum at byte %d: %w", cr.n, truncated(err))
	}
	if got := binary.LittleEndian.Uint32(tb[:]); got != want {
		return fmt.Errorf("%w: body checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, got, want)
	}
	return nil
}

// readBodyV1 reads the body of a version-1 file: every section into memory.
func (g *Graph) readBodyV1(cr *crcReader, h *header) error {
	n := int(h.Nodes)
	bodySize := uint64(n)*uint64(g.dim)*4 + uint64(n)*(8+1+4) + uint64(n)*uint64(g.stride)*4 +
		h.UpperLen*4 + uint64(words(n))*8
	left, sized := inputLen(cr.r)
	if sized && uint64(left) != bodySize+4 {
		return fmt.Errorf("hnsw: header says %d bytes follow, input has %d: truncated or padded file", bodySize+4, left)
	}
	var err error
	if g.vecs, err = readSlice[float32](cr, n*g.dim, sized); err != nil {
		return sectionError("vectors", cr, err)
	}
	if g.keys, err = readSlice[uint64](cr, n, sized); err != nil {
		return sectionError("keys", cr, err)
	}
	if g.levels, err = readSlice[uint8](cr, n, sized); err != nil {
		return sectionError("levels", cr, err)
	}
	if g.upperOff, err = readSlice[uint32](cr, n, sized); err != nil {
		return sectionError("upper offsets", cr, err)
	}
	if err := g.checkLevels(h.UpperLen); err != nil {
		return err
	}
	if g.level0, err = readSlice[uint32](cr, n*g.stride, sized); err != nil {
		return sectionError("level-0 lists", cr, err)
	}
	if g.upper, err = readSlice[uint32](cr, int(h.UpperLen), sized); err != nil {
		return sectionError("upper lists", cr, err)
	}
	if g.deleted, err = readSlice[uint64](cr, words(n), sized); err != nil {
		return sectionError("tombstones", cr, err)
	}
	return nil
}

// sectionError names the section a read failed in and where the input stopped.
func sectionError(name string, cr *crcReader, err error) error {
	return fmt.Errorf("hnsw: reading %s at byte %d: %w", name, cr.n, err)
}

// checkLevels checks the level structure (levels within the top level, upper offsets
// consecutive) before UpperLen is trusted for an allocation.
func (g *Graph) checkLevels(want uint64) error {
	var upperLen uint64
	for i, l := range g.levels {
		if int(l) > g.maxLevel || l >= maxLevels {
			return fmt.Errorf("%w: node %d has level %d above the top level %d", ErrCorrupt, i, l, g.maxLevel)
		}
		if l > 0 && uint64(g.upperOff[i]) != upperLen {
			return fmt.Errorf("%w: node %d upper offset %d, expected %d", ErrCorrupt, i, g.upperOff[i], upperLen)
		}
		upperLen += uint64(l) * uint64(g.m+1)
	}
	if upperLen != want {
		return fmt.Errorf("%w: upper lists hold %d entries, header says %d", ErrCorrupt, upperLen, want)
	}
	return nil
}

// graphFromHeader validates the header fields and returns a graph with options and sizes set.
func graphFromHeader(h *header) (*Graph, error) {
	opts := Options{M: int(h.M), EfConstruction: int(h.EfConstruction), EfSearch: int(h.EfSearch),
		Metric: Metric(h.Metric), Seed: h.Seed}
	if h.Codes > 1 || (h.Codes == 1) != (h.Version == binaryVersion) {
		return nil, fmt.Errorf("%w: codes %d in a version %d header", ErrCorrupt, h.Codes, h.Version)
	}
	if h.Codes == 1 {
		opts.Codes = CodesBinary
	}
	if h.M == 0 || h.EfConstruction == 0 || h.EfSearch == 0 || h.Metric > uint32(Dot) || h.M > 256 {
		return nil, fmt.Errorf("%w: invalid options in header (M %d, efConstruction %d, efSearch %d, metric %d)",
			ErrCorrupt, h.M, h.EfConstruction, h.EfSearch, h.Metric)
	}
	if h.Dim < 1 || h.Dim > maxDim || h.Nodes > maxNodes {
		return nil, fmt.Errorf("%w: dimension %d or node count %d out of range", ErrCorrupt, h.Dim, h.Nodes)
	}
	g, err := New(int(h.Dim), opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if (h.Nodes == 0) != (h.MaxLevel == -1) || h.MaxLevel < -1 || h.MaxLevel >= maxLevels ||
		(h.Nodes > 0 && uint64(h.Entry) >= h.Nodes) || h.Deleted > h.Nodes ||
		h.UpperLen > h.Nodes*maxLevels*uint64(g.m+1) {
		return nil, fmt.Errorf("%w: inconsistent header (nodes %d, entry %d, max level %d, deleted %d)",
			ErrCorrupt, h.Nodes, h.Entry, h.MaxLevel, h.Deleted)
	}
	g.entry, g.maxLevel = h.Entry, int(h.MaxLevel)
	return g, nil
}

// checkStructure verifies what the checksum cannot: that the lists are well formed. A file written
// by a buggy or hostile producer must not make Search index out of range.
func (g *Graph) checkStructure(deleted uint64) error {
	n := len(g.keys)
	if n > 0 && int(g.levels[g.entry]) != g.maxLevel {
		return fmt.Errorf("%w: entry node %d has level %d, header says %d", ErrCorrupt, g.entry, g.levels[g.entry], g.maxLevel)
	}
	check := func(id, l int, lst []uint32, maxN int) error {
		if int(lst[0]) > maxN {
			return fmt.Errorf("%w: node %d level %d lists %d neighbours, max %d", ErrCorrupt, id, l, lst[0], maxN)
		}
		for _, nb := range lst[1 : 1+lst[0]] {
			if int(nb) >= n {
				return fmt.Errorf("%w: node %d level %d links to node %d of %d", ErrCorrupt, id, l, nb, n)
			}
			// A search that steps to nb reads nb's list at level l: a node below l has none.
			if l > 0 && int(g.levels[nb]) < l {
				return fmt.Errorf("%w: node %d level %d links to node %d, whose level is %d", ErrCorrupt, id, l, nb, g.levels[nb])
			}
		}
		return nil
	}
	var dead uint64
	const releaseEvery = 1 << 16 // nodes whose mapped lists are released at once (8.6 MB at M 16)
	released := 0
	for id := range n {
		if id-released == releaseEvery {
			g.releaseLists(released, id)
			released = id
		}
		if err := check(id, 0, g.list(uint32(id), 0), g.m0); err != nil {
			return err
		}
		for l := 1; l <= int(g.levels[id]); l++ {
			if err := check(id, l, g.list(uint32(id), l), g.m); err != nil {
				return err
			}
		}
		if g.isDeleted(uint32(id)) {
			dead++
			continue
		}
		// The nodes before id are indexed, so lookup finds an earlier live node of its key.
		if prev, dup := g.lookupBefore(g.keys[id], id); dup {
			return fmt.Errorf("%w: key %d is live on nodes %d and %d", ErrCorrupt, g.keys[id], prev, id)
		}
		g.index(g.keys[id], uint32(id))
	}
	g.releaseLists(released, n)
	var total uint64
	for _, w := range g.deleted {
		total += uint64(bits.OnesCount64(w))
	}
	if dead != deleted || total != deleted {
		return fmt.Errorf("%w: %d tombstones, header says %d", ErrCorrupt, total, deleted)
	}
	g.nDeleted = int(deleted)
	return nil
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated file: %w", io.ErrUnexpectedEOF)
	}
	return err
}

// littleEndian reports whether the host stores integers little-endian, in which case sections
// are copied as raw memory; otherwise encoding/binary converts them.
func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// asBytes views a section slice as raw memory.
func asBytes(data any) []byte {
	switch s := data.(type) {
	case []float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
	case []uint64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	case []uint32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
	case []uint8:
		return s
	}
	panic(fmt.Sprintf("hnsw: asBytes: unexpected %T", data))
}

func writeSection(w io.Writer, data any) error {
	if littleEndian() {
		_, err := w.Write(asBytes(data))
		return err
	}
	return binary.Write(w, binary.LittleEndian, data)
}

// streamChunk is how many elements readSlice allocates at first for a section of a stream
// whose size it cannot know: the slice then doubles as the data arrives.
const streamChunk = 1 << 20

// readSlice reads a section of n elements. When the input's size was checked against the
// header (sized), it allocates the section at once; from a stream it cannot measure, it grows
// the section with what arrives, so that a header claiming more than the stream holds (up to
// the caps: 2^31 nodes of 2^16 dimensions) costs at most twice what the stream held before
// the read fails as truncated, not the header's count.
func readSlice[T uint8 | uint32 | uint64 | float32](r io.Reader, n int, sized bool) ([]T, error) {
	if sized || n <= streamChunk {
		s := make([]T, n)
		return s, readSection(r, s)
	}
	s := make([]T, 0, streamChunk)
	for len(s) < n {
		from := len(s)
		s = slices.Grow(s, min(n, max(2*from, streamChunk))-from)
		s = s[:min(n, cap(s))]
		if err := readSection(r, s[from:]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// inputLen is how many bytes remain in r, when r tells (Len() int, like *bytes.Reader and
// Load's sizedReader): the readers compare it with the header's sizes before they allocate.
func inputLen(r io.Reader) (int, bool) {
	l, ok := r.(interface{ Len() int })
	if !ok {
		return 0, false
	}
	return l.Len(), true
}

func readSection(r io.Reader, data any) error {
	var err error
	if littleEndian() {
		_, err = io.ReadFull(r, asBytes(data))
	} else {
		err = binary.Read(r, binary.LittleEndian, data)
	}
	return truncated(err)
}

// crcWriter checksums and counts what passes through.
type crcWriter struct {
	w io.Writer
	h hash.Hash32
	n int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// crcReader checksums and counts what passes through.
type crcReader struct {
	r io.Reader
	h hash.Hash32
	n int64
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}
