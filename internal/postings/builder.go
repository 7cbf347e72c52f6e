package postings

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/kairos-rag/kairos/internal/framing"
)

// BuilderOptions configure a Builder. The zero value is ready to use.
type BuilderOptions struct {
	// TempDir holds the sorted runs and the passage table while building. Default: the
	// directory of the segment file. The files are unlinked as soon as they are created, so
	// a crash leaves nothing behind.
	TempDir string
	// MaxBufferedPostings is how many postings (16 bytes each) are held in memory before they
	// are sorted and written out as a run. Default: a quarter of RAMBudget in its two
	// buffers, at most DefaultMaxBufferedPostings (32 MiB).
	MaxBufferedPostings int
	// RAMBudget is the memory, in bytes, the in-memory part of the segment (posting buffers
	// and vocabulary) may reach before Full reports true; the caller then finishes the
	// segment and starts another, as Lucene flushes its RAM buffer, so that a build's memory
	// and the collector's work do not grow with the collection (a caller that finishes one
	// segment while filling the next holds both). Default DefaultRAMBudget.
	RAMBudget int64
	// MaxPostings is how many postings a segment takes before Full reports true, whatever
	// its memory. Finish merges the segment's runs (about 20 million postings a second on a
	// core; SetMergeWorkers), and whoever finishes it waits for that: a checkpoint, the
	// build's last part.
	// Without a bound the runs pile up until the vocabulary fills the RAM budget, which a
	// corpus with a slowly growing vocabulary never does: a 10M-passage build stood still
	// for 29 s at its checkpoint. Default DefaultMaxPostings.
	MaxPostings int64
	// MergeWorkers is how many ranges of terms MergeSegments, and a Builder's Finish, merge
	// at once, each on a goroutine of its own (the result is the same file): the final
	// merge of a build takes every core; a merge in the background of a build, one. Every
	// range but the first writes its postings to a temporary file first, copied into the
	// segment at the end: the merge needs about that much more disk for a while. Default 1.
	MergeWorkers int
	// Logger receives one line per run written and one at the end; nil: silent.
	Logger *slog.Logger

	// varintBlocks writes version 2 segments (uvarint blocks), which only tests need: to
	// check that such segments still open and search as the packed ones.
	varintBlocks bool
}

// format is the envelope of the segments these options write.
func (o *BuilderOptions) format() framing.Format {
	if o.varintBlocks {
		return legacyVarintSegmentFormat
	}
	return segmentFormat
}

// DefaultMaxBufferedPostings is the largest default BuilderOptions.MaxBufferedPostings.
const DefaultMaxBufferedPostings = 1 << 21

// DefaultRAMBudget is the default BuilderOptions.RAMBudget: 256 MiB, Lucene's order of
// magnitude. Larger budgets make fewer segments to merge; the collector's work per passage
// stays flat either way, since the structures hold no pointers.
const DefaultRAMBudget = 256 << 20

// DefaultMaxPostings is the default BuilderOptions.MaxPostings: 64 Mi postings, about a
// million passages of a hundred words, finished in a few seconds.
const DefaultMaxPostings = 64 << 20

// MinRAMBudget is the smallest RAMBudget accepted (tests use it to force many segments).
const MinRAMBudget = 64 << 10

// SetDefaults fills the zero fields of o (TempDir excepted: it depends on the segment's
// path) with the defaults a Builder applies.
func (o *BuilderOptions) SetDefaults() {
	if o.RAMBudget == 0 {
		o.RAMBudget = DefaultRAMBudget
	}
	if o.MaxPostings == 0 {
		o.MaxPostings = DefaultMaxPostings
	}
	if o.MaxBufferedPostings == 0 {
		o.MaxBufferedPostings = int(min(int64(DefaultMaxBufferedPostings), max(o.RAMBudget/4/32, 256)))
	}
	if o.MergeWorkers == 0 {
		o.MergeWorkers = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *BuilderOptions) setDefaults(path string) error {
	if o.RAMBudget < 0 || (o.RAMBudget > 0 && o.RAMBudget < MinRAMBudget) {
		return fmt.Errorf("postings builder: RAMBudget %d bytes, want at least %d", o.RAMBudget, MinRAMBudget)
	}
	o.SetDefaults()
	if o.MaxBufferedPostings < 1 {
		return fmt.Errorf("postings builder: MaxBufferedPostings %d must be positive", o.MaxBufferedPostings)
	}
	if o.MaxPostings < 1 {
		return fmt.Errorf("postings builder: MaxPostings %d must be positive", o.MaxPostings)
	}
	if o.MergeWorkers < 1 {
		return fmt.Errorf("postings builder: MergeWorkers %d must be positive", o.MergeWorkers)
	}
	if o.TempDir == "" {
		o.TempDir = filepath.Dir(path)
	}
	return nil
}

// BuildStats describe a written segment.
type BuildStats struct {
	Docs     int   // passages added
	Terms    int   // distinct terms
	Postings int64 // (term, passage) pairs
	Tokens   int64 // total passage length, the sum of len(terms) over Add calls
	Runs     int   // sorted runs spilled to disk
	Bytes    int64 // size of the segment file
	SHA256   [sha256.Size]byte
	Ranges   int // ranges of terms merged at once (BuilderOptions.MergeWorkers)
}

// posting is one (term, passage) pair while building. The passage length travels with it so
// that the merge can compute block minima and term frontiers without a table of lengths in
// memory.
type posting struct{ term, ord, tf, len uint32 }

// Builder writes one segment. Feed it passages in increasing key order with Add, then call
// Finish; Abort releases its temporary files without writing a segment.
//
// Memory: two posting buffers of MaxBufferedPostings (16 bytes each: 64 MiB at the default)
// plus the vocabulary: each distinct term's bytes and about 30 bytes of offsets, hash slots
// and counters (MemoryBytes; Full compares it with RAMBudget) and, at Finish, its dictionary
// entry and Pareto frontier. Nothing is kept per passage: the
// key and length of each go to a temporary file, and the length also travels with the
// postings through the runs, so memory does not grow with the number of passages (only with
// the vocabulary, which grows far slower: Heaps' law, and which RAMBudget bounds).
// Temporary disk: the runs, about the size of the segment.
type Builder struct {
	path string
	opts BuilderOptions

	vocab *vocab   // term <-> id, ids in order of first sight; no pointers (vocab.go)
	df    []uint32 // id -> passages containing it

	buf    []posting
	sorted []posting  // spill's output, kept between spills: no garbage per run
	groups []runGroup // runOrder's, kept likewise
	runs   []*os.File
	marks  []runMarks // per run, where its terms of each first byte begin
	docs   *os.File   // key u32, length u32 per ordinal
	docsW  *bufio.Writer
	ids    []uint32 // term ids of the passage being added, in token order
	hashes []uint64 // their hashes (vocab.appendIDs's scratch)
	tfs    []uint32 // id -> term frequency in the passage being added (zero between Adds)

	n        uint32 // passages added
	lastKey  uint32
	tokens   int64
	postings int64
	err      error // sticky: the first failure ends the build
	done     bool
}

// NewBuilder starts a segment that Finish writes to path.
func NewBuilder(path string, opts BuilderOptions) (*Builder, error) {
	if err := opts.setDefaults(path); err != nil {
		return nil, err
	}
	docs, err := tempFile(opts.TempDir, "passages")
	if err != nil {
		return nil, err
	}
	return &Builder{
		path: path, opts: opts,
		vocab: newVocab(),
		buf:   make([]posting, 0, opts.MaxBufferedPostings+min(opts.MaxBufferedPostings/4, 1<<16)), // a passage may overshoot
		docs:  docs, docsW: bufio.NewWriterSize(docs, 1<<16),
	}, nil
}

// tempFile creates a file in dir and unlinks it at once: it lives as long as its descriptor.
func tempFile(dir, what string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".kairos-postings-"+what+"-*")
	if err != nil {
		return nil, fmt.Errorf("postings builder: temporary %s file: %w", what, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("postings builder: unlinking %s: %w", f.Name(), err)
	}
	return f, nil
}

// Add adds the passage key with its analysed tokens, repeats included: its length is
// len(terms). Keys must increase strictly from one call to the next.
func (b *Builder) Add(key uint32, terms []string) error {
	if b.err != nil {
		return b.err
	}
	if b.done {
		return errors.New("postings builder: Add after Finish or Abort")
	}
	if b.n > 0 && key <= b.lastKey {
		return fmt.Errorf("postings builder: key %d after key %d: keys must increase", key, b.lastKey)
	}
	if b.n == math.MaxUint32 || len(terms) > math.MaxUint32 {
		return fmt.Errorf("postings builder: passage %d: too many passages or tokens", key)
	}
	ord := b.n
	b.n++
	b.lastKey = key
	b.tokens += int64(len(terms))
	var rec [8]byte
	binary.LittleEndian.PutUint32(rec[:4], key)
	binary.LittleEndian.PutUint32(rec[4:], uint32(len(terms)))
	if _, err := b.docsW.Write(rec[:]); err != nil {
		return b.fail(fmt.Errorf("postings builder: passage table: %w", err))
	}
	// In token order, so that term ids and the file are deterministic.
	b.ids, b.hashes = b.vocab.appendIDs(b.ids[:0], terms, b.hashes)
	for _, id := range b.ids {
		if int(id) == len(b.df) { // a new term: their ids come in the order met
			b.df = append(b.df, 0)
			b.tfs = append(b.tfs, 0)
		}
		b.tfs[id]++
	}
	distinct := 0
	for _, id := range b.ids {
		tf := b.tfs[id]
		if tf == 0 {
			continue // already added
		}
		b.tfs[id] = 0
		distinct++
		b.df[id]++
		b.buf = append(b.buf, posting{term: id, ord: ord, tf: tf, len: uint32(len(terms))})
	}
	b.postings += int64(distinct)
	if len(b.buf) >= b.opts.MaxBufferedPostings {
		if err := b.spill(); err != nil {
			return b.fail(err)
		}
	}
	return nil
}

// SetMergeWorkers sets how many ranges of terms Finish merges the runs in at once
// (BuilderOptions.MergeWorkers), from n 1 on: whoever finishes a build's last part, with the
// machine to itself, gives it every core.
func (b *Builder) SetMergeWorkers(n int) {
	if n >= 1 {
		b.opts.MergeWorkers = n
	}
}

// Len is the number of passages added.
func (b *Builder) Len() int { return int(b.n) }

// MemoryBytes is what the in-memory part of the segment holds: the posting buffers, the
// vocabulary and the per-term counters. The temporary files are not counted.
func (b *Builder) MemoryBytes() int64 {
	return 16*2*int64(cap(b.buf)) /* buf and spill's sorted copy, made at the first spill */ + b.vocab.bytes() + 4*int64(cap(b.df)+cap(b.tfs)+cap(b.ids)) + 8*int64(cap(b.hashes)) +
		4*int64(b.vocab.len()) /* spill's counting sort */ + 16*int64(cap(b.groups))
}

// Full reports whether MemoryBytes has reached the RAM budget or the segment holds
// MaxPostings: time to Finish the segment and start another.
func (b *Builder) Full() bool {
	return b.postings >= b.opts.MaxPostings || b.MemoryBytes() >= b.opts.RAMBudget
}

func (b *Builder) fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// spill sorts the buffer by term (counting sort: stable, so ordinals stay increasing within
// a term) and writes it as a run, its terms in byte order (runOrder): per term, uvarint term
// id, uvarint count, then per posting uvarint ordinal gap (from the previous ordinal of the
// run's term, the first absolute), term frequency and passage length.
func (b *Builder) spill() error {
	if len(b.buf) == 0 {
		return nil
	}
	nterms := b.vocab.len()
	start := make([]uint32, nterms+1)
	for _, p := range b.buf {
		start[p.term+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	if cap(b.sorted) < len(b.buf) {
		b.sorted = make([]posting, len(b.buf), cap(b.buf))
	}
	sorted := b.sorted[:len(b.buf)]
	next := start[:nterms]
	for _, p := range b.buf {
		sorted[next[p.term]] = p
		next[p.term]++
	}
	f, err := tempFile(b.opts.TempDir, "run")
	if err != nil {
		return err
	}
	b.runs = append(b.runs, f)
	w := bufio.NewWriterSize(f, 1<<16)
	var tmp []byte
	var marks runMarks
	var off int64
	mark := 0 // the first byte whose mark is not set yet
	for _, g := range b.runOrder(sorted) {
		for fb := int(g.prefix >> 56); mark <= fb; mark++ {
			marks[mark] = off
		}
		i, j := int(g.start), int(g.end)
		tmp = binary.AppendUvarint(tmp[:0], uint64(sorted[i].term))
		tmp = binary.AppendUvarint(tmp, uint64(j-i))
		prev := uint32(0)
		for _, p := range sorted[i:j] {
			tmp = binary.AppendUvarint(tmp, uint64(p.ord-prev))
			tmp = binary.AppendUvarint(tmp, uint64(p.tf))
			tmp = binary.AppendUvarint(tmp, uint64(p.len))
			prev = p.ord
		}
		if _, err := w.Write(tmp); err != nil {
			return fmt.Errorf("postings builder: writing run %d: %w", len(b.runs), err)
		}
		off += int64(len(tmp))
	}
	for ; mark < len(marks); mark++ {
		marks[mark] = off
	}
	b.marks = append(b.marks, marks)
	if err := w.Flush(); err != nil {
		return fmt.Errorf("postings builder: writing run %d: %w", len(b.runs), err)
	}
	b.opts.Logger.Debug("postings run written", "run", len(b.runs), "postings", len(b.buf), "terms", nterms)
	b.buf = b.buf[:0]
	return nil
}

// runMarks are the offsets in a run where its groups of terms beginning with each byte
// begin (an empty term counts as beginning with 0), and its size: Finish cuts the merge of
// the runs into ranges of terms there.
type runMarks [257]int64

// runGroup is the postings of one term in a run: sorted[start:end].
type runGroup struct {
	prefix     uint64 // the term's first 8 bytes, big endian, zero-padded: most comparisons
	start, end uint32
}

// runOrder returns the groups of sorted (sorted by term id) in byte order of their terms, the
// order Finish writes the segment's postings in. A segment laid out in term-id order (as
// before) sent a merge reading it in byte order to another place of the file for every term:
// a 40M build's final merge of 37 parts of 650,000 terms each spent 78% of its time in the
// kernel, faulting 64 KiB windows in and releasing them. The sort costs one look at each
// term's bytes per run, then comparisons of integers but for terms sharing 8 bytes.
func (b *Builder) runOrder(sorted []posting) []runGroup {
	groups := b.groups[:0]
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].term == sorted[i].term {
			j++
		}
		var pre [8]byte
		copy(pre[:], b.vocab.term(sorted[i].term))
		groups = append(groups, runGroup{prefix: binary.BigEndian.Uint64(pre[:]), start: uint32(i), end: uint32(j)})
		i = j
	}
	slices.SortFunc(groups, func(x, y runGroup) int {
		if c := cmp.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		return bytes.Compare(b.vocab.term(sorted[x.start].term), b.vocab.term(sorted[y.start].term))
	})
	b.groups = groups
	return groups
}

// Abort releases the temporary files; no segment is written.
func (b *Builder) Abort() {
	b.done = true
	for _, f := range b.runs {
		f.Close()
	}
	b.runs, b.marks = nil, nil
	if b.docs != nil {
		b.docs.Close()
		b.docs = nil
	}
}
