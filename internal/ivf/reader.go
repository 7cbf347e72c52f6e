package ivf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"

	"github.com/kairos-rag/kairos/internal/framing"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// OpenOptions say how Open reads an index.
type OpenOptions struct {
	// VerifyBelow is the size up to which a mapped file's checksum is verified when it is
	// opened; larger files are mapped without being read (a caller that keeps their sha256,
	// as a Kairos manifest does, checks them in full on demand). 0: every file is verified.
	VerifyBelow int64
	// Memory is how much memory the index's files may count on staying in. When the files
	// are larger, a search asks the kernel for the pages of all the vectors it rescores at
	// once before it reads the first (madvise MADV_WILLNEED), so that the pages missing from
	// memory are read from the disk together rather than one fault at a time. 0: the memory
	// this process may use (its memory cgroup's limit, or the machine's memory).
	Memory int64
}

// Reader searches one committed index. It is safe for concurrent use.
type Reader struct {
	dir              string
	h                *Head
	dim, dpad, words int
	chunks           []*chunk
	segs             []*segment
	maps             []*mapped
	rot              rotation
	cent             *centroids
	graph            *hnsw.Graph
	bruteProbeBelow  int      // bruteProbeBelow, but in the tests of the graph's probing
	askRecords       bool     // the files outgrow OpenOptions.Memory: ask for the rescored pages together
	refines          bool     // the list segments hold refinement codes (Head.RefineBits)
	dead             []uint64 // bitmap of deleted positions
	live             int
	closed           bool
	pool             sync.Pool
}

// Open opens the index in dir.
func Open(dir string, o OpenOptions) (_ *Reader, err error) {
	if !nativeLittle {
		return nil, errors.New("ivf: the index's files are little-endian and this host is not")
	}
	b, err := os.ReadFile(filepath.Join(dir, HeadName))
	if err != nil {
		return nil, err
	}
	h, err := ParseHead(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, HeadName), err)
	}
	r := &Reader{dir: dir, h: h, dim: h.Dim, dpad: padDim(h.Dim), bruteProbeBelow: bruteProbeBelow}
	r.words = r.dpad / 64
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	verify := func(size int64) bool { return o.VerifyBelow == 0 || size <= o.VerifyBelow }
	// Files larger than the memory they may count on are read from the disk as they are
	// searched: the rescored records are asked for together (askRecords).
	mem := o.Memory
	if mem == 0 {
		mem = availableMemory()
	}
	size, err := filesSize(dir, h)
	if err != nil {
		return nil, err
	}
	r.askRecords = mem > 0 && size > mem
	for _, cr := range h.Chunks {
		c, m, err := openChunk(dir, cr, h.Dim, verify(chunkSize(h.Dim, cr.Count)))
		if err != nil {
			return nil, err
		}
		r.chunks, r.maps = append(r.chunks, c), append(r.maps, m)
	}
	for i := 1; i < len(r.chunks); i++ {
		if a, b := r.chunks[i-1], r.chunks[i]; a.keys[a.count-1] >= b.keys[0] {
			return nil, fmt.Errorf("%s: %w: key %d begins after key %d", filepath.Join(dir, h.Chunks[i].Name), ErrFormat, b.keys[0], a.keys[a.count-1])
		}
	}
	n := h.Len()
	if h.Trained() {
		b, err := os.ReadFile(filepath.Join(dir, h.Centroids))
		if err != nil {
			return nil, err
		}
		if r.cent, err = parseCentroids(b, h.Dim, h.Options.Lists); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, h.Centroids), err)
		}
		r.rot = newRotation(r.dpad, r.cent.signs)
		gpath := filepath.Join(dir, h.Graph)
		if r.graph, err = hnsw.LoadWith(gpath, hnsw.LoadOptions{}); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", gpath, ErrFormat, err)
		}
		if r.graph.Len() != h.Options.Lists || r.graph.Dim() != h.Dim {
			return nil, fmt.Errorf("%s: %w: %d centroids of dimension %d, want %d of %d", gpath, ErrFormat, r.graph.Len(), r.graph.Dim(), h.Options.Lists, h.Dim)
		}
		for _, sr := range h.Lists {
			s, m, err := openSegment(dir, sr, h.Dim, r.words, h.Options.Lists, n, verify)
			if err != nil {
				return nil, err
			}
			r.segs, r.maps = append(r.segs, s), append(r.maps, m)
			if (s.refine != nil) != (h.RefineBits > 0) {
				return nil, fmt.Errorf("%s: %w: refinement codes of %d bits a dimension in an index of %d", filepath.Join(dir, sr.Name), ErrFormat, min(1, len(s.refine)), h.RefineBits)
			}
		}
		r.refines = h.RefineBits > 0
	}
	r.dead = make([]uint64, (n+63)/64)
	if h.Deleted != "" {
		b, err := os.ReadFile(filepath.Join(dir, h.Deleted))
		if err != nil {
			return nil, err
		}
		pos, err := parseDeleted(b, n, h.DeletedCount)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, h.Deleted), err)
		}
		for _, p := range pos {
			r.dead[p>>6] |= 1 << (p & 63)
		}
	}
	r.live = n - h.DeletedCount
	return r, nil
}

// filesSize is the size of the vector chunks and list segments of h in dir.
func filesSize(dir string, h *Head) (int64, error) {
	var size int64
	for _, fr := range slices.Concat(h.Chunks, h.Lists) {
		fi, err := os.Stat(filepath.Join(dir, fr.Name))
		if err != nil {
			return 0, err
		}
		size += fi.Size()
	}
	return size, nil
}

// openChunk maps and parses the vector chunk r of dir.
func openChunk(dir string, r FileRange, dim int, verify bool) (*chunk, *mapped, error) {
	path := filepath.Join(dir, r.Name)
	m, err := mapPath(path, true)
	if err != nil {
		return nil, nil, err
	}
	c, err := parseChunk(m.b, dim, r.First, verify)
	if err == nil && c.count != r.Count {
		err = formatErr("vector chunk: %d vectors, head says %d", c.count, r.Count)
	}
	if err != nil {
		m.close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, m, nil
}

// openSegment maps and parses the list segment r of dir.
func openSegment(dir string, r FileRange, dim, words, lists, n int, verify func(size int64) bool) (*segment, *mapped, error) {
	path := filepath.Join(dir, r.Name)
	m, err := mapPath(path, false)
	if err != nil {
		return nil, nil, err
	}
	s, err := parseSegment(m.b, dim, words, lists, n, r, verify(int64(len(m.b))))
	if err != nil {
		m.close()
		if ve := (*framing.VersionError)(nil); errors.As(err, &ve) && ve.Got < listsFormat.Version {
			// Version 1 kept the codes one after another, not in blocks.
			return nil, nil, fmt.Errorf("%s: %w: written by an older kairos; rebuild the index (kairos index --force)", path, err)
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, m, nil
}

// Dir is the index's directory.
func (r *Reader) Dir() string { return r.dir }

// Head is what the index is made of.
func (r *Reader) Head() Head { return *r.h }

// Options are the index's options, Lists and Sample settled once trained.
func (r *Reader) Options() Options { return r.h.Options }

// Dim is the dimension of the vectors.
func (r *Reader) Dim() int { return r.dim }

// Len is the number of vectors, deleted ones included.
func (r *Reader) Len() int { return r.h.Len() }

// Live is the number of vectors not deleted.
func (r *Reader) Live() int { return r.live }

// Files are the names of the index's files, head.ivf included.
func (r *Reader) Files() []string { return append(r.h.Files(), HeadName) }

func (r *Reader) isDead(p uint32) bool { return r.dead[p>>6]&(1<<(p&63)) != 0 }

// deletedList returns the deleted positions in order.
func (r *Reader) deletedList() []uint32 {
	var out []uint32
	for w, x := range r.dead {
		for x != 0 {
			b := uint32(0)
			for x&(1<<b) == 0 {
				b++
			}
			out = append(out, uint32(w)*64+b)
			x &^= 1 << b
		}
	}
	return out
}

// position returns the position of key's vector.
func (r *Reader) position(key uint32) (uint32, bool) { return chunkPosition(r.chunks, key) }

// Has reports whether key has a live vector.
func (r *Reader) Has(key uint32) bool {
	p, ok := r.position(key)
	return ok && !r.isDead(p)
}

// Vector returns the canonical form of key's live vector (the unit vector of its int8 codes).
func (r *Reader) Vector(key uint32) ([]float32, bool) {
	p, ok := r.position(key)
	if !ok || r.isDead(p) {
		return nil, false
	}
	c := chunkAt(r.chunks, int(p))
	inv, code := c.rec(int(p) - c.first)
	v := make([]float32, r.dim)
	dequantize(v, code, inv)
	return v, true
}

// key returns the key of position p.
func (r *Reader) key(p uint32) uint32 {
	c := chunkAt(r.chunks, int(p))
	return c.keys[int(p)-c.first]
}

// prefetchKey asks for the key of the vector at position p to be brought into the caches.
func (r *Reader) prefetchKey(p uint32) {
	c := chunkAt(r.chunks, int(p))
	k := &c.keys[int(p)-c.first]
	prefetchBytes(unsafe.Slice((*byte)(unsafe.Pointer(k)), 4))
}

// record returns the bytes of the record of the vector at position p.
func (r *Reader) record(p uint32) []byte {
	c := chunkAt(r.chunks, int(p))
	return c.record(int(p) - c.first)
}

// Close releases the index's mappings.
func (r *Reader) Close() error {
	if r == nil {
		return nil
	}
	r.closed = true
	var first error
	for _, m := range r.maps {
		if err := m.close(); err != nil && first == nil {
			first = err
		}
	}
	r.maps, r.chunks, r.segs = nil, nil, nil
	if r.graph != nil {
		r.graph.Close()
		r.graph = nil
	}
	return first
}

// Verify checks every file of the index against its checksum and the lists against the
// positions: each live position is in exactly one list entry. It returns the first problem.
func (r *Reader) Verify() error {
	for _, m := range r.maps {
		var err error
		switch {
		case len(m.b) >= 4 && string(m.b[:4]) == chunkFormat.Magic:
			err = chunkFormat.Verify(m.b)
		case len(m.b) >= 4 && string(m.b[:4]) == listsFormat.Magic:
			err = listsFormat.Verify(m.b)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	if !r.h.Trained() {
		return nil
	}
	seen := make([]uint64, len(r.dead))
	for i, s := range r.segs {
		for _, p := range s.pos {
			if seen[p>>6]&(1<<(p&63)) != 0 {
				return fmt.Errorf("%s: %w: position %d listed twice", filepath.Join(r.dir, r.h.Lists[i].Name), ErrFormat, p)
			}
			seen[p>>6] |= 1 << (p & 63)
		}
	}
	n := r.h.Len()
	for p := range n {
		if seen[p>>6]&(1<<(p&63)) == 0 {
			return fmt.Errorf("%s: %w: position %d in no list", r.dir, ErrFormat, p)
		}
	}
	return nil
}

var errClosed = errors.New("ivf: index closed")
