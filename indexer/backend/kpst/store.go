package kpst

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/filesum"
	"github.com/kairos-rag/kairos/internal/framing"
)

// A store segment is one file: the passage records one after another, an offset table and
// a trailer, in the envelope of internal/framing (magic "KPST"). Records are binary (uvarint
// lengths) rather than JSON because a search decodes ten of them per query and JSON decoding
// would dominate BM25's own latency. Offsets are positions in the file, envelope included.
//
//	records : per passage, see appendRecord
//	offsets : (count+1) x uint64, record i spans [off[i], off[i+1])
//	trailer : offsetsPos uint64 | count uint64
//
// Version 1 had the same bytes but checksummed only what precedes the trailer and put the
// checksum after it; version 2 checksums the trailer too, as the envelope does for every file.
// Version 3 (written since passages carry a block type) has the same envelope, offsets and
// trailer; its records end with the language and the block type, both always present, where a
// version 2 record ends with an optional language. Version 2 stores are read as they are,
// every passage of them prose (an empty block type, corpus.BlockText); version 1 stores are
// refused with a request to rebuild the index.
const storeTrailer = 8 + 8

// The formats are literals, and the read-only one is named legacy*, because
// internal/framing's TestMagicsAreDistinct reads them from the source to refuse a magic
// shared by two written formats.
var (
	storeFormat         = framing.Format{Name: "passage store", Magic: "KPST", Version: 3}
	legacyStoreFormatV2 = framing.Format{Name: "passage store", Magic: "KPST", Version: 2} // read only
)

// Writer appends passages to a new store file. Not safe for concurrent use.
type Writer struct {
	base    uint32 // key of the first record
	f       *os.File
	sum     *filesum.Writer // over f: hashed as written, so a checkpoint need not read it back
	w       *bufio.Writer   // over sum
	fw      *framing.Writer // over w
	offsets []uint64
	buf     []byte
}

// Create starts a store file whose first record gets key base.
func Create(path string, base uint32) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	sum := filesum.New(f)
	sw := &Writer{base: base, f: f, sum: sum, w: bufio.NewWriterSize(sum, 1<<20)}
	if sw.fw, err = framing.NewWriter(sw.w, storeFormat); err != nil {
		f.Close()
		return nil, err
	}
	return sw, nil
}

// Add appends p and returns its key (base, base+1, ...).
func (sw *Writer) Add(p *corpus.Passage) (uint32, error) {
	if uint64(sw.base)+uint64(len(sw.offsets)) >= math.MaxUint32 {
		return 0, errors.New("passage store full (2^32 passage keys)")
	}
	key := sw.base + uint32(len(sw.offsets))
	sw.offsets = append(sw.offsets, sw.fw.Offset())
	sw.buf = appendRecord(sw.buf[:0], p)
	_, err := sw.fw.Write(sw.buf)
	return key, err
}

// Base is the key of the writer's first record.
func (sw *Writer) Base() uint32 { return sw.base }

// Abort closes the file after a failure, without finishing it.
func (sw *Writer) Abort() { sw.f.Close() }

// Count is the number of records added so far.
func (sw *Writer) Count() int { return len(sw.offsets) }

// Close writes the offset table and trailer and syncs the file.
func (sw *Writer) Close() error {
	defer sw.f.Close()
	offsetsPos := sw.fw.Offset()
	tbl := make([]byte, 0, 8*(len(sw.offsets)+1)+storeTrailer)
	for _, o := range sw.offsets {
		tbl = binary.LittleEndian.AppendUint64(tbl, o)
	}
	tbl = binary.LittleEndian.AppendUint64(tbl, offsetsPos)
	tbl = binary.LittleEndian.AppendUint64(tbl, offsetsPos) // trailer
	tbl = binary.LittleEndian.AppendUint64(tbl, uint64(len(sw.offsets)))
	if _, err := sw.fw.Write(tbl); err != nil {
		return err
	}
	if err := sw.fw.Close(); err != nil {
		return err
	}
	if err := sw.w.Flush(); err != nil {
		return err
	}
	return sw.f.Sync()
}

// Sum returns the size and sha256 of what the writer wrote: after Close, the whole file (12M
// passages are 8 GB: reading them back took most of the 10.6 s a 40M build's first checkpoint
// stood still).
func (sw *Writer) Sum() (int64, [sha256.Size]byte) { return sw.sum.Size(), sw.sum.Sum() }

// appendRecord encodes one passage in the current version's layout. Field order is part of the
// format (storeFormat.Version).
func appendRecord(b []byte, p *corpus.Passage) []byte {
	b = appendRecordV2(b, p)
	if p.Language == "" {
		b = framing.AppendString(b, "") // appendRecordV2 leaves it out
	}
	return framing.AppendString(b, p.BlockType)
}

// appendRecordV2 encodes one passage as version 2 did (no block type, the language optional):
// the start of a version 3 record, and what tests write version 2 stores with.
func appendRecordV2(b []byte, p *corpus.Passage) []byte {
	b = framing.AppendString(b, p.ID)
	b = framing.AppendString(b, p.DocID)
	b = framing.AppendString(b, p.Title)
	b = framing.AppendString(b, p.Section)
	b = framing.AppendString(b, p.Text)
	b = framing.AppendString(b, p.URL)
	b = framing.AppendString(b, p.Source)
	var unix int64 = math.MinInt64 // zero time
	if !p.Date.IsZero() {
		unix = p.Date.Unix()
	}
	b = binary.AppendVarint(b, unix)
	b = binary.AppendUvarint(b, uint64(p.Ordinal))
	b = binary.AppendUvarint(b, uint64(len(p.Years)))
	for _, y := range p.Years {
		b = binary.AppendVarint(b, int64(y.From))
		b = binary.AppendVarint(b, int64(y.To))
		b = binary.AppendUvarint(b, uint64(y.Pos))
	}
	if p.Language != "" {
		// Optional, last: records of passages without a language (every single-language
		// index) end before it, as they did before passages carried one.
		b = framing.AppendString(b, p.Language)
	}
	return b
}

// decodeRecord decodes a record of a store of the given version (2 or 3).
func decodeRecord(b []byte, version uint32) (corpus.Passage, error) {
	d := framing.Decoder{B: b}
	p := corpus.Passage{
		ID: d.ReadString(), DocID: d.ReadString(), Title: d.ReadString(), Section: d.ReadString(),
		Text: d.ReadString(), URL: d.ReadString(), Source: d.ReadString(),
	}
	if unix := d.ReadVarint(); unix != math.MinInt64 && d.Err == nil {
		p.Date = time.Unix(unix, 0).UTC()
	}
	p.Ordinal = int(d.ReadUvarint())
	if n := d.ReadUvarint(); n > 0 && d.Err == nil {
		if n > uint64(len(d.B)) {
			return p, errors.New("year count overruns record")
		}
		p.Years = make([]timex.Mention, n)
		for i := range p.Years {
			p.Years[i] = timex.Mention{From: int(d.ReadVarint()), To: int(d.ReadVarint()), Pos: int(d.ReadUvarint())}
		}
	}
	switch {
	case version >= 3:
		p.Language, p.BlockType = d.ReadString(), d.ReadString()
	case d.Err == nil && len(d.B) != 0:
		p.Language = d.ReadString()
	}
	if d.Err == nil && len(d.B) != 0 {
		d.Err = fmt.Errorf("%d trailing bytes", len(d.B))
	}
	return p, d.Err
}

// segment is one read-only passage store file held in memory: keys base..base+count-1.
type segment struct {
	name      string // file name inside the generation
	path      string // the file, for errors
	base      uint32 // key of its first record
	data      []byte // whole file
	offsets   []byte // (count+1) x uint64 little endian, a view into data
	count     int
	version   uint32 // the format version it was written in (decodeRecord)
	unmap     func() error
	release   func([]byte)       // drops pages of data from the process (mapFile)
	readahead func([]byte, bool) // read-ahead on for a walk of data, off again (mapFile)
}

func openSegment(path string, trusted bool) (*segment, error) {
	data, unmap, release, readahead, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	s, err := parseStore(data, !trusted && len(data) <= backend.VerifyBudget)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("passage store %s: %w", path, err)
	}
	s.unmap, s.release, s.readahead, s.path = unmap, release, readahead, path
	return s, nil
}

func parseStore(data []byte, verify bool) (*segment, error) {
	format := storeFormat
	payload, err := format.OpenUnverified(data)
	var ve *framing.VersionError
	if errors.As(err, &ve) && ve.Got == legacyStoreFormatV2.Version {
		format = legacyStoreFormatV2
		payload, err = format.OpenUnverified(data)
	}
	if err == nil && verify {
		err = format.Verify(data)
	}
	if errors.As(err, &ve) && ve.Got < legacyStoreFormatV2.Version {
		return nil, fmt.Errorf("%w: written by an older kairos; rebuild the index", err)
	}
	if err != nil {
		return nil, err
	}
	if len(payload) < storeTrailer {
		return nil, errors.New("no trailer")
	}
	tr := payload[len(payload)-storeTrailer:]
	offsetsPos := binary.LittleEndian.Uint64(tr[0:8])
	count := binary.LittleEndian.Uint64(tr[8:16])
	end := uint64(framing.HeaderSize + len(payload) - storeTrailer) // where the offset table ends
	if offsetsPos < framing.HeaderSize || offsetsPos > end || (end-offsetsPos)%8 != 0 || (end-offsetsPos)/8 != count+1 {
		return nil, fmt.Errorf("offset table inconsistent with count %d", count)
	}
	// release and readahead stay no-ops unless the caller knows data is a file mapping
	// (openSegment).
	return &segment{data: data, offsets: data[offsetsPos:end], count: int(count), version: format.Version,
		release: func([]byte) {}, readahead: func([]byte, bool) {}}, nil
}

// record returns the raw record of local index i.
func (s *segment) record(i uint32) ([]byte, error) {
	lo := binary.LittleEndian.Uint64(s.offsets[8*i:])
	hi := binary.LittleEndian.Uint64(s.offsets[8*i+8:])
	if lo < framing.HeaderSize || lo > hi || hi > uint64(len(s.data)) {
		return nil, s.damaged(i, fmt.Errorf("record offsets %d..%d outside the file's %d bytes", lo, hi, len(s.data)))
	}
	return s.data[lo:hi], nil
}

// damaged is the error of a record that cannot be decoded (local index i), naming the file,
// the passage key and where its record starts. The checksum of a large segment is not read
// at open, so damage shows here first.
func (s *segment) damaged(i uint32, err error) error {
	at := binary.LittleEndian.Uint64(s.offsets[8*i:])
	return &backend.DamagedError{Path: s.path, What: fmt.Sprintf("passage key %d, record at byte %d: %v", s.base+i, at, err)}
}

// Store is the read-only passage store of a generation: one or more segments covering
// consecutive key ranges, minus the tombstoned keys (passages deleted or superseded by an
// update). Keys are never reused. Safe for concurrent use.
type Store struct {
	segs []*segment // by base, contiguous: segs[i+1].base == segs[i].base+segs[i].count
	dead *tombstones.Set
	n    int // keys 0..n-1 exist (dead included)
	// releaseEvery is how many bytes of records Each reads between releases of the pages
	// behind it (0: eachRelease).
	releaseEvery int
}

// openStore reads and verifies a single-segment passage store file with no tombstones.
func openStore(path string) (*Store, error) {
	seg, err := openSegment(path, false)
	if err != nil {
		return nil, err
	}
	seg.name = filepath.Base(path)
	return &Store{segs: []*segment{seg}, dead: &tombstones.Set{}, n: seg.count}, nil
}

// OpenSegments opens the segments listed in a manifest, in order, and checks that their
// key ranges are contiguous from 0.
//
// trusted skips the checksums of the segments: for a generation this process has just written
// and synced (a build going on from its checkpoint), which need not be read back whole, and
// whose pages would otherwise count in the build's resident memory.
func OpenSegments(genDir string, segs []Segment, dead *tombstones.Set, trusted bool) (*Store, error) {
	st := &Store{dead: dead}
	for _, sg := range segs {
		s, err := openSegment(filepath.Join(genDir, sg.Name), trusted)
		if err != nil {
			st.Close()
			return nil, err
		}
		if sg.Base != uint32(st.n) || s.count != sg.Count {
			s.unmap()
			st.Close()
			return nil, fmt.Errorf("passage store %s: %d passages from key %d, manifest says %d from %d (expected base %d)",
				sg.Name, s.count, sg.Base, sg.Count, sg.Base, st.n)
		}
		s.name, s.base = sg.Name, sg.Base
		st.segs = append(st.segs, s)
		st.n += s.count
	}
	if dead == nil {
		st.dead = &tombstones.Set{}
	}
	if max, ok := st.dead.Max(); ok && int(max) >= st.n {
		st.Close()
		return nil, fmt.Errorf("tombstone for key %d beyond the store's %d keys", max, st.n)
	}
	return st, nil
}

// Segment is one store file of a generation, as its manifest lists it: keys Base to
// Base+Count-1.
type Segment = backend.Segment

// Meta returns the date and source of the passage with the given key (backend.Meta: the
// local vector engine filters with it).
//
// It decodes only those two fields: a filtered search asks it for every candidate it meets,
// and copying the text of each would cost more than the search. The store reads memory, so it
// does not consult ctx (backend.Meta's, for remote stores): per candidate, that would cost.
func (s *Store) Meta(ctx context.Context, key uint32) (time.Time, string, error) {
	seg, i, err := s.locate(key)
	if err != nil {
		return time.Time{}, "", err
	}
	rec, err := seg.record(i)
	if err != nil {
		return time.Time{}, "", err
	}
	d := framing.Decoder{B: rec}
	for range 6 { // id, document id, title, section, text, url (appendRecord's order)
		d.SkipString()
	}
	source := d.ReadString()
	var date time.Time
	if unix := d.ReadVarint(); unix != math.MinInt64 && d.Err == nil {
		date = time.Unix(unix, 0).UTC()
	}
	if d.Err != nil {
		return time.Time{}, "", seg.damaged(i, d.Err)
	}
	return date, source, nil
}

// Language returns the language of the passage with the given key ("" for a passage stored
// without one), decoding only what precedes it: a language-filtered search asks for every
// candidate it meets (backend.LanguageMeta).
func (s *Store) Language(_ context.Context, key uint32) (string, error) {
	return s.tail(key, func(d *framing.Decoder, _ *segment) string {
		if len(d.B) == 0 { // always there in version 3, optional in version 2
			return ""
		}
		return d.ReadString()
	})
}

// BlockType returns the block type of the passage with the given key as stored ("" for prose,
// and for every passage of a version 2 segment), decoding only what precedes it: a
// block-type-filtered search asks for every candidate it meets (backend.BlockTypeMeta).
func (s *Store) BlockType(_ context.Context, key uint32) (string, error) {
	return s.tail(key, func(d *framing.Decoder, seg *segment) string {
		if seg.version < 3 {
			return ""
		}
		d.SkipString() // language
		return d.ReadString()
	})
}

// tail reads a field of the record of key that follows its years, with read given the record
// decoded up to its language.
func (s *Store) tail(key uint32, read func(d *framing.Decoder, seg *segment) string) (string, error) {
	seg, i, err := s.locate(key)
	if err != nil {
		return "", err
	}
	rec, err := seg.record(i)
	if err != nil {
		return "", err
	}
	d, err := toLanguage(rec)
	if err != nil {
		return "", seg.damaged(i, err)
	}
	v := read(&d, seg)
	if d.Err != nil {
		return "", seg.damaged(i, d.Err)
	}
	return v, nil
}

// toLanguage decodes a record up to its language, the first field that follows the years.
func toLanguage(rec []byte) (framing.Decoder, error) {
	d := framing.Decoder{B: rec}
	for range 7 { // id, document id, title, section, text, url, source (appendRecord's order)
		d.SkipString()
	}
	d.ReadVarint()  // date
	d.ReadUvarint() // ordinal
	n := d.ReadUvarint()
	if d.Err == nil && n > uint64(len(d.B)) {
		return d, errors.New("year count overruns record")
	}
	for range n {
		d.ReadVarint()
		d.ReadVarint()
		d.ReadUvarint()
	}
	return d, d.Err
}

// Close releases the segments' mappings. Nothing read from the store may be used after it
// except what Get and Each returned (decoded passages are copies).
func (s *Store) Close() error {
	var errs []error
	for _, seg := range s.segs {
		if seg.unmap != nil {
			errs = append(errs, seg.unmap())
			seg.unmap = nil
		}
	}
	return errors.Join(errs...)
}

// Len is the number of keys, including tombstoned ones; the next new key is Len().
func (s *Store) Len() int { return s.n }

// Live is the number of passages not tombstoned.
func (s *Store) Live() int { return s.n - s.dead.Len() }

// Dead reports whether key is tombstoned (backend.Passages). The tombstones are in memory:
// it never fails.
func (s *Store) Dead(ctx context.Context, key uint32) (bool, error) { return s.dead.Has(key), nil }

// Tombstones returns the store's tombstone set (not to be modified).
func (s *Store) Tombstones() *tombstones.Set { return s.dead }

func (s *Store) locate(key uint32) (*segment, uint32, error) {
	if int(key) >= s.n {
		return nil, 0, fmt.Errorf("passage key %d out of range (%d passages)", key, s.n)
	}
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].base+uint32(s.segs[i].count) > key })
	seg := s.segs[i]
	return seg, key - seg.base, nil
}

// Get decodes the passage with the given key. Tombstoned passages are still readable (an
// update needs them); searches never produce their keys. ctx is not consulted, as Meta.
func (s *Store) Get(ctx context.Context, key uint32) (corpus.Passage, error) {
	seg, i, err := s.locate(key)
	if err != nil {
		return corpus.Passage{}, err
	}
	return seg.passage(i)
}

// passage decodes the record of local index i.
func (s *segment) passage(i uint32) (corpus.Passage, error) {
	rec, err := s.record(i)
	if err != nil {
		return corpus.Passage{}, err
	}
	p, err := decodeRecord(rec, s.version)
	if err != nil {
		return p, s.damaged(i, err)
	}
	return p, nil
}

// DocID returns the document id of the passage with the given key without decoding the rest
// of the record (the id and document id are its first two fields). ctx is not consulted.
func (s *Store) DocID(ctx context.Context, key uint32) (string, error) {
	seg, i, err := s.locate(key)
	if err != nil {
		return "", err
	}
	rec, err := seg.record(i)
	if err != nil {
		return "", err
	}
	d := framing.Decoder{B: rec}
	d.ReadString()
	id := d.ReadString()
	if d.Err != nil {
		return "", seg.damaged(i, d.Err)
	}
	return id, nil
}

// GetMany returns the passages of keys in their order (backend.Passages): a loop over Get,
// since the store answers from memory.
func (s *Store) GetMany(ctx context.Context, keys []uint32) ([]corpus.Passage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]corpus.Passage, len(keys))
	for i, k := range keys {
		var err error
		if out[i], err = s.Get(ctx, k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DocIDs returns the document ids of keys in their order (backend.Passages), a loop over
// DocID.
func (s *Store) DocIDs(ctx context.Context, keys []uint32) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		var err error
		if out[i], err = s.DocID(ctx, k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Each calls fn for every live passage in key order, stopping at the first error, or when
// ctx ends (a walk of the whole store is long: it checks every eachCheck keys). The mapped
// pages of the records it has passed are released as it goes (releasePages), so its resident
// memory stays bounded whatever the store's size.
func (s *Store) Each(ctx context.Context, fn func(key uint32, p corpus.Passage) error) error {
	every := s.releaseEvery
	if every <= 0 {
		every = eachRelease
	}
	for _, seg := range s.segs {
		if err := s.eachOf(ctx, seg, every, fn); err != nil {
			return err
		}
	}
	return nil
}

// eachOf is Each over one segment, with the kernel's read-ahead on for the walk (the mapping
// is advised random for lookups, mapFile).
func (s *Store) eachOf(ctx context.Context, seg *segment, every int, fn func(key uint32, p corpus.Passage) error) error {
	seg.readahead(seg.data, true)
	defer seg.readahead(seg.data, false)
	released := 0 // data[:released] is released
	for i := range seg.count {
		k := seg.base + uint32(i)
		if i%eachCheck == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if s.dead.Has(k) {
			continue
		}
		p, err := seg.passage(uint32(i))
		if err != nil {
			return err
		}
		if err := fn(k, p); err != nil {
			return err
		}
		// Whole pages before this record's end: records are laid out in key order.
		if end := int(binary.LittleEndian.Uint64(seg.offsets[8*i+8:])); end-released >= every {
			upto := end &^ (pageSize - 1)
			seg.release(seg.data[released:upto])
			released = upto
		}
	}
	return nil
}

const (
	// eachCheck is how many keys Each walks between looks at its context.
	eachCheck = 1024
	// eachRelease is how many bytes of records Each reads between releases of their pages.
	eachRelease = 32 << 20
	// pageSize aligns what Each releases (a multiple of every page size Linux uses).
	pageSize = 64 << 10
)

var _ io.Closer = (*Writer)(nil)

var (
	_ backend.Meta     = (*Store)(nil)
	_ backend.Passages = (*Store)(nil)
)
