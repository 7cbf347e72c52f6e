package ivf

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"unsafe"

	"github.com/kairos-rag/kairos/internal/framing"
)

// The formats of the index's files, in Kairos's checksummed envelope (internal/framing: magic,
// version, payload, CRC-32C, magic). A reader refuses other versions rather than guess at
// their layout.
var (
	headFormat     = framing.Format{Name: "IVF head", Magic: "KIVH", Version: 1}
	chunkFormat    = framing.Format{Name: "IVF vector chunk", Magic: "KIVV", Version: 1}
	listsFormat    = framing.Format{Name: "IVF list segment", Magic: "KIVL", Version: 3}
	centroidFormat = framing.Format{Name: "IVF centroids", Magic: "KIVC", Version: 1}
	deletedFormat  = framing.Format{Name: "IVF deletions", Magic: "KIVD", Version: 1}
	// legacyListsFormatV2 is the list segment before refinement codes: version 3's layout
	// without them, still read.
	legacyListsFormatV2 = framing.Format{Name: "IVF list segment", Magic: "KIVL", Version: 2}
)

// The file names' suffixes, and HeadName, the one file whose name is fixed.
const (
	HeadName      = "head.ivf"
	chunkSuffix   = ".ivfv"
	listsSuffix   = ".ivfl"
	centSuffix    = ".ivfc"
	graphSuffix   = ".hnsw"
	deletedSuffix = ".ivfd"
)

// align is the alignment of every column of a file, so that a mapped file's columns are read
// in place as arrays of numbers.
const align = 64

// ErrFormat is wrapped by every error about a file this package cannot read: wrong magic,
// version, size, checksum or contents. It is internal/framing's.
var ErrFormat = framing.ErrFormat

// formatErr is an ErrFormat naming what is wrong.
func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, a...))
}

// fileName is the pattern of every file a head may name: a plain name in the index directory,
// so a damaged or crafted head cannot point a reader or a hard link elsewhere. The numbers
// grow with every update of an index and its derived ones: six digits at least.
var fileName = regexp.MustCompile(`^[a-z]+-[0-9]{6,12}\.(ivfv|ivfl|ivfc|hnsw|ivfd)$`)

// name returns the name of file number n with the given prefix and suffix.
func name(prefix string, n int, suffix string) string {
	return fmt.Sprintf("%s-%06d%s", prefix, n, suffix)
}

// pad rounds n up to a multiple of align.
func pad(n int64) int64 { return (n + align - 1) / align * align }

// FileRange is a file of an index holding positions First to First+Count-1 (vector chunks and
// list segments).
type FileRange struct {
	Name  string `json:"name"`
	First int    `json:"first"`
	Count int    `json:"count"`
}

// Head is the contents of head.ivf: what the index is made of.
type Head struct {
	Dim int `json:"dim"`
	// Options are the index's, with Lists and Sample settled when the build began (Lists
	// may still be 0 then, settled at training).
	Options Options `json:"options"`
	// Centroids and Graph name the centroid file and the graph over the centroids; "" until
	// the centroids are trained.
	Centroids string `json:"centroids,omitempty"`
	Graph     string `json:"graph,omitempty"`
	// Chunks hold the int8 vectors, in position order from 0.
	Chunks []FileRange `json:"chunks"`
	// Lists hold the codes, in position order from 0; once the centroids are trained they cover
	// every position.
	Lists []FileRange `json:"lists"`
	// Deleted names the deletions file ("" with none) and DeletedCount counts them.
	Deleted      string `json:"deleted,omitempty"`
	DeletedCount int    `json:"deleted_count"`
	// RefineBits is the bits a dimension of each vector's refinement code (refine.go): 1 in
	// an index this version creates, 0 in one an older version created (an index derived from
	// it keeps none, so that every list segment of an index is alike).
	RefineBits int `json:"refine_bits,omitempty"`
	// NextFile is the number of the last file a writer created (its next file takes the one
	// after): names are never reused within an index and the indexes derived from it, so a
	// hard-linked file is never written over.
	NextFile int `json:"next_file"`
}

// Len is the number of positions (vectors added, deleted ones included).
func (h *Head) Len() int {
	if len(h.Chunks) == 0 {
		return 0
	}
	c := h.Chunks[len(h.Chunks)-1]
	return c.First + c.Count
}

// Trained reports whether the centroids are trained.
func (h *Head) Trained() bool { return h.Centroids != "" }

// validate checks the head's consistency: plain file names, contiguous ranges, lists covering
// every position once trained.
func (h *Head) validate() error {
	if h.Dim < 1 || h.Dim > 1<<16 {
		return formatErr("head: dimension %d", h.Dim)
	}
	if err := h.Options.Validate(); err != nil {
		return formatErr("head: %v", err)
	}
	if h.RefineBits != 0 && h.RefineBits != 1 {
		return formatErr("head: refinement codes of %d bits a dimension", h.RefineBits)
	}
	names := map[string]bool{}
	check := func(what, n, suffix string) error {
		if !fileName.MatchString(n) || n[len(n)-len(suffix):] != suffix {
			return formatErr("head: %s %q is not a file name of the index", what, n)
		}
		if names[n] {
			return formatErr("head: %s %q named twice", what, n)
		}
		names[n] = true
		return nil
	}
	ranges := func(what, suffix string, rs []FileRange) (int, error) {
		next := 0
		for _, r := range rs {
			if err := check(what, r.Name, suffix); err != nil {
				return 0, err
			}
			if r.First != next || r.Count < 1 || r.Count > math.MaxUint32-next {
				return 0, formatErr("head: %s %s holds positions %d+%d, want them from %d", what, r.Name, r.First, r.Count, next)
			}
			next += r.Count
		}
		return next, nil
	}
	n, err := ranges("vector chunk", chunkSuffix, h.Chunks)
	if err != nil {
		return err
	}
	listed, err := ranges("list segment", listsSuffix, h.Lists)
	if err != nil {
		return err
	}
	switch {
	case (h.Centroids == "") != (h.Graph == ""):
		return formatErr("head: centroids %q without graph %q", h.Centroids, h.Graph)
	case h.Centroids == "" && listed > 0:
		return formatErr("head: list segments without centroids")
	case h.Centroids != "" && listed != n:
		return formatErr("head: list segments cover %d of %d positions", listed, n)
	case h.Centroids != "" && h.Options.Lists < 1:
		return formatErr("head: trained with %d lists", h.Options.Lists)
	case h.DeletedCount < 0 || h.DeletedCount > n || (h.Deleted == "") != (h.DeletedCount == 0):
		return formatErr("head: %d deletions in %q for %d positions", h.DeletedCount, h.Deleted, n)
	case h.NextFile < 0:
		return formatErr("head: next file %d", h.NextFile)
	}
	if h.Centroids != "" {
		if err := check("centroids", h.Centroids, centSuffix); err != nil {
			return err
		}
		if err := check("graph", h.Graph, graphSuffix); err != nil {
			return err
		}
	}
	if h.Deleted != "" {
		if err := check("deletions", h.Deleted, deletedSuffix); err != nil {
			return err
		}
	}
	return nil
}

// Files are the names of every file the head names, itself excluded.
func (h *Head) Files() []string {
	var out []string
	for _, c := range h.Chunks {
		out = append(out, c.Name)
	}
	for _, l := range h.Lists {
		out = append(out, l.Name)
	}
	if h.Centroids != "" {
		out = append(out, h.Centroids, h.Graph)
	}
	if h.Deleted != "" {
		out = append(out, h.Deleted)
	}
	return out
}

// encodeHead returns head.ivf's bytes: the head as JSON in the envelope.
func encodeHead(h *Head) ([]byte, error) {
	body, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	return headFormat.Seal(append(headFormat.Begin(), body...)), nil
}

// ParseHead decodes and checks head.ivf's bytes.
func ParseHead(b []byte) (*Head, error) {
	body, err := headFormat.Open(b)
	if err != nil {
		return nil, err
	}
	var h Head
	if err := json.Unmarshal(body, &h); err != nil {
		return nil, formatErr("head: %v", err)
	}
	if err := h.validate(); err != nil {
		return nil, err
	}
	return &h, nil
}

// openFrame checks b's envelope of format f, its checksum too when verify is set (a large mapped
// file is checked by its sha256 in the manifest instead, by kairos verify), and that it holds
// at least least bytes of payload.
func openFrame(b []byte, f framing.Format, least int, verify bool) error {
	var err error
	if verify {
		_, err = f.Open(b)
	} else {
		_, err = f.OpenUnverified(b)
	}
	if err == nil && len(b) < framing.HeaderSize+least+framing.FooterSize {
		err = formatErr("%s of %d bytes", f.Name, len(b))
	}
	return err
}

// frameWriter writes a file's sections in the envelope, padding each to align (offsets are
// the file's, envelope header included), through a buffer.
type frameWriter struct {
	buf *bufio.Writer
	fw  *framing.Writer
	err error
}

func newFrameWriter(w io.Writer, f framing.Format) *frameWriter {
	buf := bufio.NewWriterSize(w, 1<<20)
	fw, err := framing.NewWriter(buf, f)
	return &frameWriter{buf: buf, fw: fw, err: err}
}

func (f *frameWriter) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.fw.Write(p)
	f.err = err
	return n, err
}

// offset is the file offset of the next byte.
func (f *frameWriter) offset() int64 { return int64(f.fw.Offset()) }

// padTo writes zeros up to the next multiple of align.
func (f *frameWriter) padTo() {
	var zeros [align]byte
	if r := pad(f.offset()) - f.offset(); r > 0 {
		f.Write(zeros[:r])
	}
}

// flush writes what is buffered to the file.
func (f *frameWriter) flush() error {
	if f.err != nil {
		return f.err
	}
	return f.buf.Flush()
}

// finish writes the footer (checksum, magic) and flushes.
func (f *frameWriter) finish() error {
	if f.err != nil {
		return f.err
	}
	if err := f.fw.Close(); err != nil {
		return err
	}
	return f.buf.Flush()
}

// numbersOf views b as little-endian numbers, copied when b is not aligned for them. Like
// the aligned view, the copy takes the host's byte order, which Open and Create require to
// be little-endian (nativeLittle).
func numbersOf[T uint32 | uint64 | float32](b []byte) []T {
	size := int(unsafe.Sizeof(T(0)))
	if len(b) < size {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
	}
	out := make([]T, len(b)/size)
	copy(bytesOf(out), b)
	return out
}

// bytesOf views a slice of numbers as its bytes, for writing (little-endian hosts: see
// nativeLittle).
func bytesOf[T uint32 | uint64 | float32 | int8](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// nativeLittle: the columns are written and mapped as the host's numbers, which must be
// little-endian, the files' byte order.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// chunk is a parsed vector chunk: count records of dim int8 codes with the inverse of their
// norm, and the keys, from position first.
type chunk struct {
	dim   int
	first int
	count int
	recs  []byte   // count records of recSize(dim) bytes: inverse norm (float32), codes (int8)
	keys  []uint32 // count keys, strictly ascending
}

// recSize is the size of one record of a vector chunk.
func recSize(dim int) int { return 4 + dim }

// chunkHeader is the size of a vector chunk's header: the envelope's, then the dimension
// (uint32 at 8), the first position (uint64 at 16).
const chunkHeader = 32

// chunkTrailer is the size of a vector chunk's trailer: the count (uint64), then the
// envelope's footer.
const chunkTrailer = 16

// chunkSize is the size of a vector chunk of count vectors of dim.
func chunkSize(dim, count int) int64 {
	return pad(chunkHeader+int64(count)*int64(recSize(dim))) + int64(count)*4 + chunkTrailer
}

// parseChunk decodes a vector chunk of vectors of dim starting at position first; verify checks
// its checksum.
func parseChunk(b []byte, dim, first int, verify bool) (*chunk, error) {
	if err := openFrame(b, chunkFormat, chunkHeader+chunkTrailer-16, verify); err != nil {
		return nil, err
	}
	if d := int(binary.LittleEndian.Uint32(b[8:])); d != dim {
		return nil, formatErr("vector chunk: dimension %d, want %d", d, dim)
	}
	if f := binary.LittleEndian.Uint64(b[16:]); f != uint64(first) {
		return nil, formatErr("vector chunk: first position %d, want %d", f, first)
	}
	count := binary.LittleEndian.Uint64(b[len(b)-16:])
	if count > uint64(len(b)) || chunkSize(dim, int(count)) != int64(len(b)) {
		return nil, formatErr("vector chunk: %d vectors of dimension %d in %d bytes", count, dim, len(b))
	}
	c := &chunk{dim: dim, first: first, count: int(count)}
	end := chunkHeader + int64(count)*int64(recSize(dim))
	c.recs = b[chunkHeader:end]
	c.keys = numbersOf[uint32](b[pad(end) : pad(end)+int64(count)*4])
	for i := 1; i < len(c.keys); i++ {
		if c.keys[i] <= c.keys[i-1] {
			return nil, formatErr("vector chunk: key %d at %d follows key %d", c.keys[i], first+i, c.keys[i-1])
		}
	}
	return c, nil
}

// rec returns the inverse norm and codes of the chunk's i-th vector.
func (c *chunk) rec(i int) (float32, []byte) { return splitRecord(c.record(i)) }

// record returns the bytes of the chunk's i-th record.
func (c *chunk) record(i int) []byte { return c.recs[i*recSize(c.dim) : (i+1)*recSize(c.dim)] }

// splitRecord returns the inverse norm and codes of a record.
func splitRecord(r []byte) (float32, []byte) {
	return math.Float32frombits(binary.LittleEndian.Uint32(r)), r[4:]
}

// segment is a parsed list segment: the codes of count positions from first, grouped by list.
type segment struct {
	first, count int
	lists        int
	words        int      // uint64 words of a code
	offsets      []uint32 // lists+1: list l holds entries offsets[l] to offsets[l+1]-1
	pos          []uint32 // position of each entry
	blocks       []byte   // each list's codes in blocks (fastscan.go)
	blockAt      []uint32 // lists+1: list l's codes are blocks blockAt[l] to blockAt[l+1]-1 (derived)
	factors      []float32
	// refine holds the refinement codes in entry order, refineWords(words) a code (refine.go);
	// nil in a segment without them.
	refine []uint64
}

// listBlocks returns list l's code blocks and how many codes they hold.
func (s *segment) listBlocks(l int32) ([]byte, int) {
	bb := blockBytes(s.words)
	return s.blocks[int(s.blockAt[l])*bb : int(s.blockAt[l+1])*bb], int(s.offsets[l+1] - s.offsets[l])
}

// listCodes appends list l's codes, words words each, to codes.
func (s *segment) listCodes(codes []uint64, l int32) []uint64 {
	b, n := s.listBlocks(l)
	return unpackBlocks(codes, b, n, s.words)
}

// segHeader is the size of a list segment's header: the envelope's, then the dimension, code
// words, lists and refinement bits a dimension (uint32s at 8, 12, 16, 20; the last 0 in
// version 2), the first position, the count and the number of code blocks (uint64s at 24, 32,
// 40).
const segHeader = 64

// factorsPer is the number of float32 factors of one code: its scale, its bias and its error
// bound (rabitq.go).
const factorsPer = 3

// segCols are the offsets of a list segment's columns (refine 0 when it has no refinement
// codes).
type segCols struct {
	offsets, pos, codes, factors, refine int64
}

// segLayout returns the offsets of a list segment's columns and its size; refineBits is 0 or
// 1.
func segLayout(lists, words, count, blocks, refineBits int) (c segCols, size int64) {
	c.offsets = segHeader
	c.pos = pad(c.offsets + int64(lists+1)*4)
	c.codes = pad(c.pos + int64(count)*4)
	c.factors = pad(c.codes + int64(blocks)*int64(blockBytes(words)))
	end := pad(c.factors + int64(count)*factorsPer*4)
	if refineBits > 0 {
		c.refine = end
		end = pad(c.refine + int64(count)*int64(refineWords(words))*8)
	}
	return c, end + 8
}

// parseSegment decodes a list segment of an index of dim (words code words), lists lists and
// n positions, holding positions first to first+count-1.
func parseSegment(b []byte, dim, words, lists, n int, r FileRange, verify bool) (*segment, error) {
	err := openFrame(b, listsFormat, segHeader-8, verify)
	if ve := (*framing.VersionError)(nil); errors.As(err, &ve) && ve.Got == legacyListsFormatV2.Version {
		err = openFrame(b, legacyListsFormatV2, segHeader-8, verify)
	}
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	d, w, l, rb := int(le.Uint32(b[8:])), int(le.Uint32(b[12:])), int(le.Uint32(b[16:])), int(le.Uint32(b[20:]))
	first, count, nb := le.Uint64(b[24:]), le.Uint64(b[32:]), le.Uint64(b[40:])
	if d != dim || w != words || l != lists || first != uint64(r.First) || count != uint64(r.Count) {
		return nil, formatErr("list segment: dimension %d, %d words, %d lists, positions %d+%d; want %d, %d, %d, %d+%d",
			d, w, l, first, count, dim, words, lists, r.First, r.Count)
	}
	if rb != 0 && rb != 1 {
		return nil, formatErr("list segment: refinement codes of %d bits a dimension", rb)
	}
	if nb > count {
		return nil, formatErr("list segment: %d code blocks for %d codes", nb, count)
	}
	c, size := segLayout(lists, words, r.Count, int(nb), rb)
	if size != int64(len(b)) {
		return nil, formatErr("list segment: %d bytes, want %d", len(b), size)
	}
	s := &segment{first: r.First, count: r.Count, lists: lists, words: words,
		offsets: numbersOf[uint32](b[c.offsets : c.offsets+int64(lists+1)*4]),
		pos:     numbersOf[uint32](b[c.pos : c.pos+int64(r.Count)*4]),
		blocks:  b[c.codes : c.codes+int64(nb)*int64(blockBytes(words))],
		factors: numbersOf[float32](b[c.factors : c.factors+int64(r.Count)*factorsPer*4]),
		blockAt: make([]uint32, lists+1),
	}
	if rb > 0 {
		s.refine = numbersOf[uint64](b[c.refine : c.refine+int64(r.Count)*int64(refineWords(words))*8])
	}
	if s.offsets[0] != 0 || int(s.offsets[lists]) != r.Count {
		return nil, formatErr("list segment: offsets from %d to %d for %d entries", s.offsets[0], s.offsets[lists], r.Count)
	}
	for i := 1; i <= lists; i++ {
		if s.offsets[i] < s.offsets[i-1] {
			return nil, formatErr("list segment: list %d ends before it starts", i-1)
		}
		s.blockAt[i] = s.blockAt[i-1] + uint32(blocksOf(int(s.offsets[i]-s.offsets[i-1])))
	}
	if uint64(s.blockAt[lists]) != nb {
		return nil, formatErr("list segment: %d code blocks, its lists need %d", nb, s.blockAt[lists])
	}
	for _, p := range s.pos {
		if int(p) < r.First || int(p) >= r.First+r.Count || int(p) >= n {
			return nil, formatErr("list segment: position %d outside %d+%d", p, r.First, r.Count)
		}
	}
	return s, nil
}

// centroids are the trained part of an index: the rotation, the centroid directions (unit
// vectors, dim) and the lists' centres after rotation (dpad).
type centroids struct {
	dim, dpad, lists int
	signs            []byte    // 3*dpad: 1 where the rotation's sign flips
	dirs             []float32 // lists*dim
	centers          []float32 // lists*dpad
	// dirs8 and inv8 are dirs in signed bytes (lists*dim, quantize's codes) and their inverse
	// norms (derived): a search compares the query with every centroid to choose its lists,
	// and at 8,192 lists the floats (8 MiB) stream from memory for each query (a fifth of a
	// 10M search's time), where the bytes stay in the cache.
	dirs8 []byte
	inv8  []float32
}

// derive computes what is derived from the stored centroids.
func (c *centroids) derive() {
	c.dirs8, c.inv8 = make([]byte, c.lists*c.dim), make([]float32, c.lists)
	for l := range c.lists {
		c.inv8[l] = quantize(c.dirs8[l*c.dim:(l+1)*c.dim], c.dirs[l*c.dim:(l+1)*c.dim])
	}
}

// centHeader is the size of a centroid file's header: the envelope's, then the dimension, the
// padded dimension and the lists (uint32s at 8, 12, 16).
const centHeader = 64

func centLayout(dim, dpad, lists int) (signs, dirs, centers, size int64) {
	signs = centHeader
	dirs = pad(signs + 3*int64(dpad))
	centers = pad(dirs + int64(lists)*int64(dim)*4)
	size = pad(centers+int64(lists)*int64(dpad)*4) + 8
	return
}

// parseCentroids decodes a centroid file of an index of dim and lists lists.
func parseCentroids(b []byte, dim, lists int) (*centroids, error) {
	if err := openFrame(b, centroidFormat, centHeader-8, true); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	d, dp, l := int(le.Uint32(b[8:])), int(le.Uint32(b[12:])), int(le.Uint32(b[16:]))
	if d != dim || dp != padDim(dim) || l != lists {
		return nil, formatErr("centroids: dimension %d (%d), %d lists; want %d (%d), %d", d, dp, l, dim, padDim(dim), lists)
	}
	so, do, co, size := centLayout(d, dp, l)
	if size != int64(len(b)) {
		return nil, formatErr("centroids: %d bytes, want %d", len(b), size)
	}
	c := &centroids{dim: d, dpad: dp, lists: l,
		signs:   append([]byte(nil), b[so:so+3*int64(dp)]...),
		dirs:    append([]float32(nil), numbersOf[float32](b[do:do+int64(l*d)*4])...),
		centers: append([]float32(nil), numbersOf[float32](b[co:co+int64(l*dp)*4])...),
	}
	for _, s := range c.signs {
		if s > 1 {
			return nil, formatErr("centroids: rotation sign %d", s)
		}
	}
	if !finite(c.centers) {
		return nil, formatErr("centroids: centre not finite")
	}
	if !finite(c.dirs) {
		return nil, formatErr("centroids: direction not finite")
	}
	c.derive()
	return c, nil
}

// writeCentroids writes c.
func writeCentroids(w io.Writer, c *centroids) error {
	f := newFrameWriter(w, centroidFormat)
	var h [centHeader - 8]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], uint32(c.dim))
	le.PutUint32(h[4:], uint32(c.dpad))
	le.PutUint32(h[8:], uint32(c.lists))
	f.Write(h[:])
	f.Write(c.signs)
	f.padTo()
	f.Write(bytesOf(c.dirs))
	f.padTo()
	f.Write(bytesOf(c.centers))
	f.padTo()
	return f.finish()
}

// deletedHeader is the size of a deletions file's header: the envelope's, then the count
// (uint64 at 8).
const deletedHeader = 16

// parseDeleted decodes a deletions file of an index of n positions: count positions, strictly
// ascending.
func parseDeleted(b []byte, n, count int) ([]uint32, error) {
	if err := openFrame(b, deletedFormat, deletedHeader-8, true); err != nil {
		return nil, err
	}
	c := binary.LittleEndian.Uint64(b[8:])
	if c != uint64(count) || int64(len(b)) != deletedHeader+int64(count)*4+8 {
		return nil, formatErr("deletions: %d positions in %d bytes, head says %d", c, len(b), count)
	}
	pos := numbersOf[uint32](b[deletedHeader : deletedHeader+count*4])
	for i, p := range pos {
		if int(p) >= n || (i > 0 && p <= pos[i-1]) {
			return nil, formatErr("deletions: position %d (of %d) out of order or range", p, n)
		}
	}
	return append([]uint32(nil), pos...), nil
}

// writeDeleted writes the sorted positions pos.
func writeDeleted(w io.Writer, pos []uint32) error {
	f := newFrameWriter(w, deletedFormat)
	var h [deletedHeader - 8]byte
	binary.LittleEndian.PutUint64(h[:], uint64(len(pos)))
	f.Write(h[:])
	f.Write(bytesOf(pos))
	return f.finish()
}
