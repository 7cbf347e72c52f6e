package postings

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// The temporary files of a termRange: everything but the first range's postings goes
// through them, to be copied into the segment in range order once every range is merged.
const (
	postingsTemp = iota
	blocksTemp
	frontierTemp
	dictTemp
	stringsTemp
	nTemps
)

// termRange merges the terms of segs from lo (inclusive) to hi (exclusive), in byte order
// (nil: unbounded), into sections of its own, so that MergeSegments can merge several ranges
// at once, one a core, and concatenate them: the merged segment is byte for byte the one a
// single range writes. Its block, dictionary and frontier entries count from the range's
// start; mergeWrite moves them as it copies them.
type termRange struct {
	segs   []*Segment
	bases  []uint32 // ordinal of each segment's first passage in the merged segment
	lo, hi []byte
	starts []int // each segment's first dictionary entry in the range
	heads  []int // after merge: each segment's first dictionary entry past the range

	temps    [nTemps]*os.File
	tws      [nTemps]*bufio.Writer
	tw       *termWriter
	postBase uint64 // payload offset of the range's postings in the merged segment
	varint   bool   // uvarint blocks (BuilderOptions.varintBlocks)

	terms    uint64
	postings int64
	strBytes uint64
}

// open creates the range's temporary files. The range writes its postings to out at the
// payload offsets off reports, or with out nil to a temporary file of its own.
func (r *termRange) open(dir string, out io.Writer, off func() uint64) error {
	for i, what := range [nTemps]string{"postings", "blocks", "frontier", "dict", "strings"} {
		if i == postingsTemp && out != nil {
			continue
		}
		f, err := tempFile(dir, "merge-"+what)
		if err != nil {
			return err
		}
		r.temps[i] = f
		r.tws[i] = bufio.NewWriterSize(f, 1<<16)
	}
	if out == nil {
		bw, o := countedBuffer(r.temps[postingsTemp])
		r.tws[postingsTemp] = bw
		out, off = bw, o
	}
	r.tw = &termWriter{out: out, blocks: r.tws[blocksTemp], frontierW: r.tws[frontierTemp], off: off, varint: r.varint}
	return nil
}

func (r *termRange) close() {
	for _, f := range r.temps {
		if f != nil {
			f.Close()
		}
	}
}

// seek finds, in each segment's dictionary, the first term at or after lo.
func (r *termRange) seek() error {
	r.starts = make([]int, len(r.segs))
	if r.lo == nil {
		return nil
	}
	for i, s := range r.segs {
		var bad error
		r.starts[i] = sort.Search(int(s.tr.terms), func(j int) bool {
			t := s.termBytes(j)
			if t == nil {
				bad = s.corrupt("term %d: string outside the string table", j)
				return true
			}
			return bytes.Compare(t, r.lo) >= 0
		})
		if bad != nil {
			return bad
		}
	}
	return nil
}

// merge writes the range: each term's postings from the segments holding it, in their order,
// with ordinals shifted by the passages of the segments before.
func (r *termRange) merge(ctx context.Context) error {
	if err := r.seek(); err != nil {
		return err
	}
	segs, tw := r.segs, r.tw
	r.heads = slices.Clone(r.starts)
	h := termHeap{terms: make([][]byte, len(segs))} // the segments by their next term
	for i, s := range segs {
		if r.heads[i] < int(s.tr.terms) {
			if h.terms[i] = s.termBytes(r.heads[i]); h.terms[i] == nil {
				return s.corrupt("term %d: string outside the string table", r.heads[i])
			}
			h.segs = append(h.segs, i)
		}
	}
	heap.Init(&h)
	var e [dictEntrySize]byte
	var touched uint64
	pages := make([]pageCount, len(segs))
	for len(h.segs) > 0 {
		term := h.terms[h.segs[0]]
		if r.hi != nil && bytes.Compare(term, r.hi) >= 0 {
			break
		}
		if r.terms%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tw.begin()
		firstBlock := tw.nblocks
		var df uint64
		// the segments holding term, in their order (the heap breaks ties by index)
		for len(h.segs) > 0 && bytes.Equal(h.terms[h.segs[0]], term) {
			i := h.segs[0]
			s := segs[i]
			ti, _, err := s.entry(r.heads[i])
			if err != nil {
				return err
			}
			c := newCursor(s, ti)
			for ; c.cur != exhausted; c.next() {
				if err := tw.add(posting{ord: r.bases[i] + c.cur, tf: c.tf(), len: s.length(c.cur)}); err != nil {
					return fmt.Errorf("%s: term %q: %w", s.path, term, err)
				}
			}
			if c.err != nil {
				return c.err
			}
			df += uint64(ti.df)
			touched += pages[i].term(s, r.heads[i], ti)
			if r.heads[i]++; r.heads[i] == int(s.tr.terms) {
				heap.Pop(&h)
				continue
			}
			next := s.termBytes(r.heads[i])
			if next == nil {
				return s.corrupt("term %d: string outside the string table", r.heads[i])
			}
			if bytes.Compare(next, term) <= 0 {
				return s.corrupt("term %q after %q: dictionary out of byte order", next, term)
			}
			h.terms[i] = next
			heap.Fix(&h, 0)
		}
		if df != uint64(tw.count) {
			return fmt.Errorf("term %q: merged %d postings, the dictionaries say %d", term, tw.count, df)
		}
		if err := tw.end(); err != nil {
			return err
		}
		r.postings += int64(df)
		if touched >= releaseEvery {
			touched = 0
			for _, s := range segs {
				releasePages(s.data)
			}
			clear(pages)
		}
		binary.LittleEndian.PutUint64(e[0:], r.strBytes)
		binary.LittleEndian.PutUint32(e[8:], uint32(len(term)))
		binary.LittleEndian.PutUint32(e[12:], uint32(df))
		binary.LittleEndian.PutUint64(e[16:], firstBlock)
		binary.LittleEndian.PutUint32(e[24:], tw.frontStart)
		binary.LittleEndian.PutUint32(e[28:], tw.frontN)
		if _, err := r.tws[dictTemp].Write(e[:]); err != nil {
			return err
		}
		// term aliases a mapped segment: written before the next term is looked at
		if _, err := r.tws[stringsTemp].Write(term); err != nil {
			return err
		}
		r.strBytes += uint64(len(term))
		r.terms++
	}
	if _, err := r.tws[frontierTemp].Write(tw.frontier); err != nil {
		return err
	}
	tw.frontier = tw.frontier[:0]
	if r.tws[postingsTemp] != nil {
		return r.tws[postingsTemp].Flush()
	}
	return nil
}

// splitTerms returns the terms that cut a merge of segs into n ranges of about equal
// postings (n-1 terms, or none when the dictionaries are too small to be worth cutting). They
// come from the dictionary of the segment with the most passages, whose document
// frequencies stand for the merge's.
func splitTerms(segs []*Segment, n int) ([][]byte, error) {
	var big *Segment
	for _, s := range segs {
		if big == nil || s.tr.docs > big.tr.docs {
			big = s
		}
	}
	if n <= 1 || big == nil || big.tr.terms < uint64(n)*minRangeTerms {
		return nil, nil
	}
	terms := int(big.tr.terms)
	df := func(i int) uint64 { return uint64(binary.LittleEndian.Uint32(big.dict[i*dictEntrySize+12:])) }
	var total uint64
	for i := range terms {
		total += df(i)
	}
	var splits [][]byte
	var sum uint64
	for i := 0; i+1 < terms && len(splits) < n-1; i++ {
		sum += df(i)
		if sum*uint64(n) < total*uint64(len(splits)+1) {
			continue
		}
		t := big.termBytes(i + 1)
		if t == nil {
			return nil, big.corrupt("term %d: string outside the string table", i+1)
		}
		if len(splits) > 0 && bytes.Compare(t, splits[len(splits)-1]) <= 0 {
			return nil, big.corrupt("term %q: dictionary out of byte order", t)
		}
		splits = append(splits, bytes.Clone(t))
	}
	return splits, nil
}

// minRangeTerms is the fewest terms of the largest segment per range for a merge to be cut:
// below, the merge takes milliseconds and one range does. (A variable only so that a test
// can cut small merges.)
var minRangeTerms uint64 = 1024

// copyEntries flushes fw, the writer of the temporary file f of size-byte entries, and copies
// them to w, each passed through move first.
func copyEntries(w io.Writer, fw *bufio.Writer, f *os.File, size int, move func(e []byte) error) error {
	if err := fw.Flush(); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	buf := make([]byte, size*2048)
	for {
		n, err := io.ReadFull(br, buf)
		if n%size != 0 {
			return fmt.Errorf("merge: temporary table of %d-byte entries cut short", size)
		}
		for e := 0; e < n; e += size {
			if err := move(buf[e : e+size]); err != nil {
				return err
			}
		}
		if _, werr := w.Write(buf[:n]); werr != nil {
			return werr
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
