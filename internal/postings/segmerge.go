package postings

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/framing"
)

// MergeSegments writes to path (atomically) one segment holding the passages of segs, in
// their order: every key of a segment must be below every key of the next, as they are for
// the segments a budgeted build flushes one after another. A search over the result scores
// and ranks as one over segs (document frequencies add up, lengths and term frequencies are
// copied). The merge streams: the dictionaries are walked together in byte order and each
// term's postings are re-encoded with ordinals shifted by the passages of the segments
// before; the tables go through temporary files in opts.TempDir, so its memory is a few
// buffers, whatever the size of the segments.
func MergeSegments(ctx context.Context, path string, segs []*Segment, opts BuilderOptions) (*BuildStats, error) {
	if err := opts.setDefaults(path); err != nil {
		return nil, err
	}
	var docs uint64
	lastKey, any := uint32(0), false
	for _, s := range segs {
		if s.tr.docs == 0 {
			continue
		}
		if any && s.key(0) <= lastKey {
			return nil, fmt.Errorf("merging postings segments: %s starts at key %d, not above the previous segment's last key %d", s.path, s.key(0), lastKey)
		}
		lastKey, any = s.key(uint32(s.tr.docs-1)), true
		docs += s.tr.docs
	}
	if docs >= math.MaxUint32 {
		return nil, fmt.Errorf("merging postings segments: %d passages, more than a segment holds", docs)
	}
	st := &BuildStats{Docs: int(docs)}
	err := atomicfile.Write(path, atomicfile.Options{}, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		if err := mergeWrite(ctx, cw, segs, opts, st); err != nil {
			return err
		}
		st.Bytes = cw.n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("merging postings segments into %s: %w", path, err)
	}
	opts.Logger.Info("postings segments merged", "path", path, "segments", len(segs), "passages", st.Docs, "terms", st.Terms, "postings", st.Postings, "bytes", st.Bytes)
	return st, nil
}

// termBytes returns the bytes of dictionary entry i, or nil when they lie outside the table.
func (s *Segment) termBytes(i int) []byte {
	e := s.dict[i*dictEntrySize:]
	off, n := binary.LittleEndian.Uint64(e), uint64(binary.LittleEndian.Uint32(e[8:]))
	if off > uint64(len(s.strs)) || n > uint64(len(s.strs))-off {
		return nil
	}
	return s.strs[off : off+n]
}

// releaseEvery is how many pages (4 KiB) a merge may have mapped from its inputs between two
// releases of them (releasePages): at most 64 MiB resident, whatever their size. The count
// (termPages) is an upper bound: a segment built by a Builder lays its postings and block
// entries out in term-id order, not in the byte order the merge walks, so each term reads
// them somewhere else, and a rare term's few bytes map a window of 64 KiB (the kernel maps
// 16 pages around each fault) of each. A count of postings undercounts that: releasing every
// 8Mi postings left 29 to 64 MB of each input of a 3M build's final merge resident. (A
// variable only so that a test can release after every few terms.)
var releaseEvery uint64 = 16 << 10

// termPages bounds the pages of one segment that reading a term of df postings maps: a
// window of 16 pages for its block entries, another for its postings, a third for its
// dictionary entry and string (read in order, so mostly mapped already: counted anyway), and
// about 2.5 bytes a posting.
func termPages(df uint32) uint64 { return 3*16 + uint64(df)/1024 }

func mergeWrite(ctx context.Context, w io.Writer, segs []*Segment, opts BuilderOptions, st *BuildStats) error {
	fw, err := framing.NewWriter(w, segmentFormat)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fw, 1<<16)
	payloadOff := func() uint64 { return fw.Offset() + uint64(bw.Buffered()) - framing.HeaderSize }

	var temps [3]*os.File // blocks, frontier, dict+strings are written after the postings
	var tws [3]*bufio.Writer
	for i, what := range []string{"blocks", "frontier", "dict"} {
		if temps[i], err = tempFile(opts.TempDir, "merge-"+what); err != nil {
			return err
		}
		defer temps[i].Close()
		tws[i] = bufio.NewWriterSize(temps[i], 1<<16)
	}
	strF, err := tempFile(opts.TempDir, "merge-strings")
	if err != nil {
		return err
	}
	defer strF.Close()
	strW := bufio.NewWriterSize(strF, 1<<16)

	tw := &termWriter{out: bw, blocks: tws[0], frontierW: tws[1], off: payloadOff}
	heads := make([]int, len(segs)) // next dictionary entry of each segment
	bases := make([]uint32, len(segs))
	var tokens uint64
	h := termHeap{terms: make([][]byte, len(segs))} // the segments by their next term
	for i, s := range segs {
		if i > 0 {
			bases[i] = bases[i-1] + uint32(segs[i-1].tr.docs)
		}
		tokens += s.tr.tokens
		if s.tr.terms > 0 {
			if h.terms[i] = s.termBytes(0); h.terms[i] == nil {
				return s.corrupt("term 0: string outside the string table")
			}
			h.segs = append(h.segs, i)
		}
	}
	heap.Init(&h)
	var e [dictEntrySize]byte
	var strOff uint64
	var terms, touched uint64
	for len(h.segs) > 0 {
		term := h.terms[h.segs[0]]
		if terms%4096 == 0 {
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
			ti, _, err := s.entry(heads[i])
			if err != nil {
				return err
			}
			c := newCursor(s, ti)
			for ; c.cur != exhausted; c.next() {
				if err := tw.add(posting{ord: bases[i] + c.cur, tf: c.tf(), len: s.length(c.cur)}); err != nil {
					return fmt.Errorf("%s: term %q: %w", s.path, term, err)
				}
			}
			if c.err != nil {
				return c.err
			}
			df += uint64(ti.df)
			touched += termPages(ti.df)
			if heads[i]++; heads[i] == int(s.tr.terms) {
				heap.Pop(&h)
				continue
			}
			next := s.termBytes(heads[i])
			if next == nil {
				return s.corrupt("term %d: string outside the string table", heads[i])
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
		st.Postings += int64(df)
		if touched >= releaseEvery {
			touched = 0
			for _, s := range segs {
				releasePages(s.data)
			}
		}
		binary.LittleEndian.PutUint64(e[0:], strOff)
		binary.LittleEndian.PutUint32(e[8:], uint32(len(term)))
		binary.LittleEndian.PutUint32(e[12:], uint32(df))
		binary.LittleEndian.PutUint64(e[16:], firstBlock)
		binary.LittleEndian.PutUint32(e[24:], tw.frontStart)
		binary.LittleEndian.PutUint32(e[28:], tw.frontN)
		if _, err := tws[2].Write(e[:]); err != nil {
			return err
		}
		// term aliases a mapped segment: written before the next term is looked at
		if _, err := strW.Write(term); err != nil {
			return err
		}
		strOff += uint64(len(term))
		terms++
	}
	if _, err := tws[1].Write(tw.frontier); err != nil {
		return err
	}
	st.Terms, st.Tokens = int(terms), int64(tokens)

	var tr trailer
	tr.docs, tr.terms, tr.blocks, tr.tokens, tr.frontier = uint64(st.Docs), terms, tw.nblocks, tokens, tw.frontPairs
	for i, sec := range []*uint64{&tr.blocksOff, &tr.frontierOff, &tr.dictOff} {
		*sec = payloadOff()
		if err := copyTemp(bw, tws[i], temps[i]); err != nil {
			return err
		}
	}
	tr.stringsOff = payloadOff()
	if err := copyTemp(bw, strW, strF); err != nil {
		return err
	}
	tr.keysOff = payloadOff()
	for _, s := range segs {
		if _, err := bw.Write(s.keys); err != nil {
			return err
		}
	}
	tr.lensOff = payloadOff()
	for _, s := range segs {
		if _, err := bw.Write(s.lens); err != nil {
			return err
		}
	}
	if _, err := bw.Write(tr.append(nil)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return fw.Close()
}

// copyTemp flushes fw, the writer of the temporary file f, and copies f to w.
func copyTemp(w io.Writer, fw *bufio.Writer, f *os.File) error {
	if err := fw.Flush(); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, bufio.NewReaderSize(f, 1<<16))
	return err
}

// termHeap orders segments by their next dictionary term, then by their index (so that a
// term's postings are copied in segment order), for container/heap: the merge takes the least
// term in a logarithmic number of comparisons instead of comparing every segment's.
type termHeap struct {
	segs  []int    // segment indexes, heap-ordered
	terms [][]byte // terms[i]: segment i's next term
}

func (h *termHeap) Len() int { return len(h.segs) }
func (h *termHeap) Less(a, b int) bool {
	x, y := h.segs[a], h.segs[b]
	c := bytes.Compare(h.terms[x], h.terms[y])
	return c < 0 || c == 0 && x < y
}
func (h *termHeap) Swap(a, b int) { h.segs[a], h.segs[b] = h.segs[b], h.segs[a] }
func (h *termHeap) Push(x any)    { h.segs = append(h.segs, x.(int)) }
func (h *termHeap) Pop() any {
	i := h.segs[len(h.segs)-1]
	h.segs = h.segs[:len(h.segs)-1]
	return i
}
