package doctable

import (
	"bufio"
	"bytes"
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kairos-rag/kairos/internal/filesum"
	"github.com/kairos-rag/kairos/internal/framing"
)

// Log is the document table of a build (append mode), kept out of memory: a build of ten
// million documents held them as a map of pointers (two objects and three pointers each),
// which the collector walked over and over, so the cost of each passage grew with the
// collection (issue 28: 55% of the CPU in the collector at 1.7M passages). Entries are
// appended to a byte buffer (no pointers: one slab and its offsets), and when the buffer
// reaches its limit it is sorted by id and written as a run to an unlinked temporary file,
// as the postings builder spills its postings. A checkpoint and the end of the build merge
// the runs (and the table of the generation the build continued from, after a restart) into
// the generation's docs.kdoc, combining the entries of a repeated id in the order they came.
// Memory: the buffer's limit, whatever the number of documents.
type Log struct {
	Dir   string // where runs are created (and unlinked at once)
	Limit int    // bytes of buffered entries that make a run (DefaultLogLimit)
	// Base is the document table of the generation the build continued from when it started
	// (a resumed build's checkpoint), held open because later checkpoints remove that
	// generation; nil: none. Its entries come before every run's. Close closes BaseDone.
	Base     io.ReadSeeker
	BaseDone io.Closer

	buf  []byte
	offs []uint64 // each buffered entry: its start in buf << 32 | its length
	runs []*os.File
}

// DefaultLogLimit is the default buffer of a Log: 32 MiB, about 600,000 entries of synthetic
// ids; ten million documents make 16 runs.
const DefaultLogLimit = 32 << 20

// Rec is one entry while merging. Its slices are reused from entry to entry.
type Rec struct {
	ID      []byte
	Hash    Hash
	Input   int32 // 1 + the build's input index; 0: unknown (the base table does not store it)
	FromPos bool  // the id was made from the record's position in its input (no id field)
	Keys    []uint32
}

// Add appends a document's entry. input is 1 + the index of its input.
func (l *Log) Add(id string, h Hash, keys []uint32, input int32, fromPos bool) error {
	if len(l.buf) >= l.Limit && len(l.offs) > 0 {
		if err := l.spill(); err != nil {
			return err
		}
	}
	if uint64(len(l.buf)) > 1<<32-1 {
		return errors.New("document log: entry buffer over 4 GiB") // limit is far below
	}
	start := len(l.buf)
	l.buf = appendDocRec(l.buf, id, h, keys, input, fromPos)
	l.offs = append(l.offs, uint64(start)<<32|uint64(len(l.buf)-start))
	return nil
}

func appendDocRec(b []byte, id string, h Hash, keys []uint32, input int32, fromPos bool) []byte {
	b = framing.AppendString(b, id)
	b = append(b, h[:]...)
	b = binary.AppendUvarint(b, uint64(input))
	if fromPos {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return appendKeys(b, keys)
}

// entry returns the bytes of a buffered entry, and idAt its id.
func (l *Log) entry(e uint64) []byte {
	start := int(e >> 32)
	return l.buf[start : start+int(uint32(e))]
}

func (l *Log) idAt(e uint64) []byte {
	b := l.entry(e)
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)]
}

// spill sorts the buffered entries by id (stably: a repeated id keeps its order) and writes
// them as a run.
func (l *Log) spill() error {
	slices.SortStableFunc(l.offs, func(a, b uint64) int { return bytes.Compare(l.idAt(a), l.idAt(b)) })
	f, err := os.CreateTemp(l.Dir, "docs-run-*.tmp")
	if err != nil {
		return fmt.Errorf("document log: %w", err)
	}
	os.Remove(f.Name()) // unlinked: a crash leaves nothing behind
	w := bufio.NewWriterSize(f, 1<<16)
	for _, e := range l.offs {
		if _, err := w.Write(l.entry(e)); err != nil {
			f.Close()
			return fmt.Errorf("document log: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("document log: %w", err)
	}
	l.runs = append(l.runs, f)
	l.buf, l.offs = l.buf[:0], l.offs[:0]
	return nil
}

// byteReader is what readRec reads from.
type byteReader interface {
	io.Reader
	io.ByteReader
}

// readRec reads one entry into r: a run's layout, or with table set the layout of
// docs.kdoc, which has no input and flag.
func readRec(br byteReader, r *Rec, table bool) error {
	uv := func() (uint64, error) { return binary.ReadUvarint(br) }
	n, err := uv()
	if err != nil {
		return err // io.EOF at the end of a run
	}
	if n > 1<<20 {
		return fmt.Errorf("document id of %d bytes", n)
	}
	r.ID = slices.Grow(r.ID[:0], int(n))[:n]
	if _, err := io.ReadFull(br, r.ID); err != nil {
		return noEOF(err)
	}
	if _, err := io.ReadFull(br, r.Hash[:]); err != nil {
		return noEOF(err)
	}
	r.Input, r.FromPos = 0, false
	if !table {
		in, err := uv()
		if err != nil {
			return noEOF(err)
		}
		flag, err := br.ReadByte()
		if err != nil {
			return noEOF(err)
		}
		r.Input, r.FromPos = int32(in), flag == 1
	}
	nk, err := uv()
	if err != nil {
		return noEOF(err)
	}
	if nk > 1<<32 {
		return fmt.Errorf("document %q: %d keys", r.ID, nk)
	}
	r.Keys = r.Keys[:0]
	var k uint64
	for range nk {
		d, err := uv()
		if err != nil {
			return noEOF(err)
		}
		if k += d; k > 1<<32-1 {
			return fmt.Errorf("document %q: key out of range", r.ID)
		}
		r.Keys = append(r.Keys, uint32(k))
	}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// runSource yields the entries of one sorted run (or the base table) in id order.
type runSource struct {
	r     *bufio.Reader
	idx   int    // order of the source: the base first, then runs as written
	table bool   // the base table's layout
	left  uint64 // entries left in the base table
	cur   Rec
}

func (s *runSource) next() (bool, error) {
	if s.table {
		if s.left == 0 {
			return false, nil
		}
		s.left--
	}
	err := readRec(s.r, &s.cur, s.table)
	if err == io.EOF && !s.table {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("document log: reading back: %w", noEOF(err))
	}
	return true, nil
}

type runHeap []*runSource

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].cur.ID, h[j].cur.ID); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runSource)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// open positions every source at its start: the base table, then the runs in order.
func (l *Log) open() (runHeap, error) {
	var h runHeap
	if l.Base != nil {
		if _, err := l.Base.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("base document table: %w", err)
		}
		br := bufio.NewReaderSize(l.Base, 1<<16)
		var head [framing.HeaderSize + 8]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return nil, fmt.Errorf("base document table: %w", noEOF(err))
		}
		if string(head[:4]) != Format.Magic || binary.LittleEndian.Uint32(head[4:8]) != Format.Version {
			return nil, fmt.Errorf("base document table: not a %s of version %d", Format.Name, Format.Version)
		}
		h = append(h, &runSource{r: br, idx: 0, table: true, left: binary.LittleEndian.Uint64(head[8:])})
	}
	for i, f := range l.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("document log: %w", err)
		}
		h = append(h, &runSource{r: bufio.NewReaderSize(f, 1<<16), idx: i + 1})
	}
	live := h[:0]
	for _, s := range h {
		ok, err := s.next()
		if err != nil {
			return nil, err
		}
		if ok {
			live = append(live, s)
		}
	}
	heap.Init(&live)
	return live, nil
}

// Merge calls each(first, rest) for every distinct id in id order: first is the id's first
// entry, rest its repeats in the order they came. The records passed are valid during the
// call only.
func (l *Log) Merge(each func(first *Rec, rest []*Rec) error) error {
	h, err := l.open()
	if err != nil {
		return err
	}
	var first Rec
	var rest []*Rec
	var pool []*Rec
	for len(h) > 0 {
		s := h[0]
		copyRec(&first, &s.cur)
		rest = rest[:0]
		if err := l.advance(&h); err != nil {
			return err
		}
		for len(h) > 0 && bytes.Equal(h[0].cur.ID, first.ID) {
			if len(pool) == len(rest) {
				pool = append(pool, &Rec{})
			}
			r := pool[len(rest)]
			copyRec(r, &h[0].cur)
			rest = append(rest, r)
			if err := l.advance(&h); err != nil {
				return err
			}
		}
		if err := each(&first, rest); err != nil {
			return err
		}
	}
	return nil
}

// advance moves the top source to its next entry, dropping it at its end.
func (l *Log) advance(h *runHeap) error {
	s := (*h)[0]
	ok, err := s.next()
	if err != nil {
		return err
	}
	if ok {
		heap.Fix(h, 0)
		return nil
	}
	heap.Pop(h)
	return nil
}

func copyRec(dst, src *Rec) {
	dst.ID = append(dst.ID[:0], src.ID...)
	dst.Hash, dst.Input, dst.FromPos = src.Hash, src.Input, src.FromPos
	dst.Keys = append(dst.Keys[:0], src.Keys...)
}

// Written describes a table file WriteTable wrote: its documents, and its size and sha256,
// hashed as it was written so that the generation's checksums need not read it back (1.9 GB
// at 40M documents, at every checkpoint of the build).
type Written struct {
	Docs   int
	Size   int64
	SHA256 [sha256.Size]byte
}

// WriteTable writes the merged table to path (docs.kdoc). check sees each id's entries before
// they are combined (a build refuses some repeats).
func (l *Log) WriteTable(path string, check func(first *Rec, rest []*Rec) error) (Written, error) {
	if len(l.offs) > 0 {
		if err := l.spill(); err != nil {
			return Written{}, err
		}
	}
	// The count heads the payload, so a first pass counts the distinct ids.
	count := 0
	if err := l.Merge(func(first *Rec, rest []*Rec) error {
		count++
		return check(first, rest)
	}); err != nil {
		return Written{}, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return Written{}, err
	}
	fail := func(err error) (Written, error) {
		f.Close()
		os.Remove(path)
		return Written{}, err
	}
	sum := filesum.New(f)
	bw := bufio.NewWriterSize(sum, 1<<16)
	fw, err := framing.NewWriter(bw, Format)
	if err != nil {
		return fail(err)
	}
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 1<<12), uint64(count))
	var keys []uint32
	err = l.Merge(func(first *Rec, rest []*Rec) error {
		h := first.Hash
		keys = append(keys[:0], first.Keys...)
		for _, r := range rest {
			h = h.Combine(r.Hash)
			keys = append(keys, r.Keys...)
		}
		b = appendEntry(b, string(first.ID), h, keys)
		if len(b) >= 1<<12 {
			if _, err := fw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if _, err := fw.Write(b); err != nil {
		return fail(err)
	}
	if err := fw.Close(); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return Written{Docs: count, Size: sum.Size(), SHA256: sum.Sum()}, f.Close()
}

// Close releases the runs.
func (l *Log) Close() {
	for _, f := range l.runs {
		f.Close()
	}
	if l.BaseDone != nil {
		l.BaseDone.Close()
	}
	l.runs, l.buf, l.offs, l.Base, l.BaseDone = nil, nil, nil, nil, nil
}
