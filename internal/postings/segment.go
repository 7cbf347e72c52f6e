package postings

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"

	"github.com/kairos-rag/kairos/internal/framing"
)

// OpenOptions configure Open. The zero value is ready to use.
type OpenOptions struct {
	// SkipChecksum skips the CRC-32C of the whole file that Open otherwise streams through
	// once (the pages it touches stay evictable page cache, not process memory). The envelope
	// and the trailer are still checked, and every read is bounds-checked, so a damaged file
	// gives errors, never a panic; but damage inside a posting list may then go unnoticed.
	SkipChecksum bool
}

// Segment is an opened, memory-mapped segment file. It is safe for concurrent searches.
type Segment struct {
	path  string
	data  []byte
	unmap func() error
	tr    trailer

	postings, blocks, frontier, dict, strs, keys, lens []byte
	// lens8 is every passage length as one byte, lenEscape standing for "look in lens". A
	// search reads the length of each candidate it scores, tens of thousands a query, spread
	// over the collection: at 10M passages the file's 40 MB of lengths are four times the
	// cache lines of 10 MB of bytes (Lucene keeps its norms in a byte). Neither stays in the
	// caches of the build machine, whose guest waits about 150 ns for a random read of a 4 MB
	// working set (docs/benchmarks.md). Measured on 1,000 queries of bench scale's 10M index, 2
	// cores: 15% less CPU, rankings byte-identical; at 1M no change. Built at open in one pass
	// over lens: 1 byte a passage of memory, no pointer.
	lens8 []byte
	// packed is the whole payload, which the postings section starts, when the blocks are
	// packed (version 3), nil for the uvarint blocks of versions 1 and 2: a packed block is
	// read with 8-byte loads that may run up to packPad bytes past its end, which the tables
	// and trailer after the postings always cover.
	packed []byte
}

// lenEscape in lens8 sends a length of 255 tokens or more to lens.
const lenEscape = 255

// Open maps the segment file at path and checks its envelope and trailer.
func Open(path string, opts OpenOptions) (*Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening postings segment: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening postings segment: %w", err)
	}
	data, unmap, err := mapFile(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("opening postings segment %s: %w", path, err)
	}
	s := &Segment{path: path, data: data, unmap: unmap}
	if err := s.parse(opts); err != nil {
		unmap()
		return nil, fmt.Errorf("postings segment %s: %w", path, err)
	}
	return s, nil
}

func (s *Segment) parse(opts OpenOptions) error {
	b := s.data
	format := envelope(b)
	var payload []byte
	if opts.SkipChecksum {
		if len(b) < framing.HeaderSize+framing.FooterSize || string(b[:4]) != format.Magic {
			return fmt.Errorf("not a %s (bad magic or too short): %w", format.Name, framing.ErrFormat)
		}
		if v := binary.LittleEndian.Uint32(b[4:8]); v != format.Version {
			return &framing.VersionError{Format: format, Got: v}
		}
		if string(b[len(b)-4:]) != format.Magic {
			return fmt.Errorf("truncated %s (no closing magic): %w", format.Name, framing.ErrFormat)
		}
		payload = b[framing.HeaderSize : len(b)-framing.FooterSize]
	} else {
		p, err := format.Open(b)
		if err != nil {
			return err
		}
		payload = p
	}
	tr, err := parseTrailer(payload)
	if err != nil {
		return fmt.Errorf("%w: %w", err, framing.ErrFormat)
	}
	s.tr = tr
	s.postings = payload[tr.postingsOff:tr.blocksOff]
	s.blocks = payload[tr.blocksOff:tr.frontierOff]
	s.frontier = payload[tr.frontierOff:tr.dictOff]
	s.dict = payload[tr.dictOff:tr.stringsOff]
	s.strs = payload[tr.stringsOff:tr.keysOff]
	s.keys = payload[tr.keysOff:tr.lensOff]
	s.lens = payload[tr.lensOff : uint64(len(payload))-trailerSize]
	if format == segmentFormat {
		s.packed = payload
	}
	s.lens8 = make([]byte, len(s.lens)/4)
	for i := range s.lens8 {
		s.lens8[i] = byte(min(binary.LittleEndian.Uint32(s.lens[4*i:]), lenEscape))
	}
	return nil
}

// Close unmaps the file. Searches must have ended.
func (s *Segment) Close() error {
	if s.unmap == nil {
		return nil
	}
	err := s.unmap()
	s.unmap, s.data = nil, nil
	return err
}

// Path is the file the segment was opened from.
func (s *Segment) Path() string { return s.path }

// Len is the number of passages in the segment.
func (s *Segment) Len() int { return int(s.tr.docs) }

// Tokens is the total length of the segment's passages.
func (s *Segment) Tokens() int64 { return int64(s.tr.tokens) }

// Terms is the number of distinct terms.
func (s *Segment) Terms() int { return int(s.tr.terms) }

// key returns the passage key of ordinal ord (< Len).
func (s *Segment) key(ord uint32) uint32 { return binary.LittleEndian.Uint32(s.keys[4*ord:]) }

// length returns the length of ordinal ord (< Len).
func (s *Segment) length(ord uint32) uint32 {
	if l := s.lens8[ord]; l != lenEscape {
		return uint32(l)
	}
	return binary.LittleEndian.Uint32(s.lens[4*ord:])
}

// Length returns the length in tokens of the passage key, and whether the segment has it.
func (s *Segment) Length(key uint32) (int, bool) {
	n := s.Len()
	i := sort.Search(n, func(i int) bool { return s.key(uint32(i)) >= key })
	if i == n || s.key(uint32(i)) != key {
		return 0, false
	}
	return int(s.length(uint32(i))), true
}

// termInfo is a dictionary entry, checked against the segment's tables.
type termInfo struct {
	df         uint32
	firstBlock uint64
	nblocks    uint64
	frontStart uint64
	frontN     uint64
}

// errCorrupt wraps every error about the inside of a segment.
var errCorrupt = fmt.Errorf("corrupt postings segment: %w", framing.ErrFormat)

func (s *Segment) corrupt(format string, args ...any) error {
	return fmt.Errorf("postings segment %s: %s: %w", s.path, fmt.Sprintf(format, args...), errCorrupt)
}

func (s *Segment) termAt(i int) string {
	e := s.dict[i*dictEntrySize:]
	off, n := binary.LittleEndian.Uint64(e), uint64(binary.LittleEndian.Uint32(e[8:]))
	if off > uint64(len(s.strs)) || n > uint64(len(s.strs))-off {
		return "" // reported by lookup
	}
	return string(s.strs[off : off+n])
}

// lookup finds term in the dictionary; ok is false when the segment does not have it.
func (s *Segment) lookup(term string) (ti termInfo, ok bool, err error) {
	n := int(s.tr.terms)
	i := sort.Search(n, func(i int) bool { return s.termAt(i) >= term })
	if i == n || s.termAt(i) != term {
		return ti, false, nil
	}
	return s.entry(i)
}

func (s *Segment) entry(i int) (ti termInfo, ok bool, err error) {
	e := s.dict[i*dictEntrySize:]
	off, n := binary.LittleEndian.Uint64(e), uint64(binary.LittleEndian.Uint32(e[8:]))
	if off > uint64(len(s.strs)) || n > uint64(len(s.strs))-off {
		return ti, false, s.corrupt("term %d: string [%d, +%d) outside the string table", i, off, n)
	}
	ti.df = binary.LittleEndian.Uint32(e[12:])
	ti.firstBlock = binary.LittleEndian.Uint64(e[16:])
	ti.frontStart = uint64(binary.LittleEndian.Uint32(e[24:]))
	ti.frontN = uint64(binary.LittleEndian.Uint32(e[28:]))
	ti.nblocks = (uint64(ti.df) + BlockSize - 1) / BlockSize
	switch {
	case ti.df == 0 || uint64(ti.df) > s.tr.docs:
		return ti, false, s.corrupt("term %q: document frequency %d of %d passages", s.termAt(i), ti.df, s.tr.docs)
	case ti.firstBlock > s.tr.blocks || ti.nblocks > s.tr.blocks-ti.firstBlock:
		return ti, false, s.corrupt("term %q: blocks [%d, +%d) outside the %d blocks", s.termAt(i), ti.firstBlock, ti.nblocks, s.tr.blocks)
	case ti.frontN == 0 || ti.frontStart > s.tr.frontier || ti.frontN > s.tr.frontier-ti.frontStart:
		return ti, false, s.corrupt("term %q: frontier [%d, +%d) outside the %d pairs", s.termAt(i), ti.frontStart, ti.frontN, s.tr.frontier)
	}
	return ti, true, nil
}

// DocFreq returns the number of passages of the segment that contain term.
func (s *Segment) DocFreq(term string) (int, error) {
	ti, ok, err := s.lookup(term)
	if !ok {
		return 0, err
	}
	return int(ti.df), nil
}

// frontierPair returns pair j of ti's frontier.
func (s *Segment) frontierPair(ti termInfo, j uint64) (tf, length uint32) {
	e := s.frontier[(ti.frontStart+j)*frontierEntrySize:]
	return binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint32(e[4:])
}

// blockEntry returns block b (global index) of the block table.
type blockEntry struct {
	last   uint32
	off    uint64
	maxTF  uint32
	minLen uint32
}

func (s *Segment) blockAt(b uint64) blockEntry {
	e := s.blocks[b*blockEntrySize:]
	return blockEntry{
		last:   binary.LittleEndian.Uint32(e),
		off:    binary.LittleEndian.Uint64(e[4:]),
		maxTF:  binary.LittleEndian.Uint32(e[12:]),
		minLen: binary.LittleEndian.Uint32(e[16:]),
	}
}

// blockEnd is where block b's bytes end: where the next block begins.
func (s *Segment) blockEnd(b uint64) uint64 {
	if b+1 < s.tr.blocks {
		return binary.LittleEndian.Uint64(s.blocks[(b+1)*blockEntrySize+4:])
	}
	return uint64(len(s.postings))
}
