package postings

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/filesum"
	"github.com/kairos-rag/kairos/internal/framing"
	"golang.org/x/sync/errgroup"
)

// MergeSegments writes to path (atomically) one segment holding the passages of segs, in
// their order: every key of a segment must be below every key of the next, as they are for
// the segments a budgeted build flushes one after another. A search over the result scores
// and ranks as one over segs (document frequencies add up, lengths and term frequencies are
// copied). The merge streams: the dictionaries are walked together in byte order and each
// term's postings are re-encoded with ordinals shifted by the passages of the segments
// before; the tables go through temporary files in opts.TempDir, so its memory is a few
// buffers, whatever the size of the segments. With opts.MergeWorkers above 1 the dictionary
// is cut into as many ranges of terms (termRange), merged at once and concatenated: the file
// is byte for byte the one a single range writes.
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
		sw := filesum.New(w)
		if err := mergeWrite(ctx, sw, segs, opts, st); err != nil {
			return err
		}
		st.Bytes, st.SHA256 = sw.Size(), sw.Sum()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("merging postings segments into %s: %w", path, err)
	}
	opts.Logger.Info("postings segments merged", "path", path, "segments", len(segs), "ranges", st.Ranges, "passages", st.Docs, "terms", st.Terms, "postings", st.Postings, "bytes", st.Bytes)
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
// releases of them (releasePages): about 64 MiB resident per range of terms merged at once,
// whatever their size. Each range counts its own pages and, when they reach this, releases
// every input whole (the other ranges' pages too, which they fault back in). The count
// (pageCount) is an estimate from above, not an exact bound: it takes the kernel's windows
// at offsets of the payload, not at aligned addresses. (A variable only so that a test can
// release after every few terms.)
var releaseEvery uint64 = 16 << 10

// pageCount counts the pages a merge maps from one input: for each section it reads, the
// 64 KiB windows it moves into (the kernel maps 16 pages around each fault) since the last
// release. A segment whose postings and block entries lie in byte order of terms, as the
// dictionary does (every segment written now), is read front to back: each window is counted
// once. One in term-id order (a Builder's before) sends each term somewhere else, and each
// jump counts a window: a rare term's few bytes map 64 KiB. (Counting postings instead left 29
// to 64 MB of each input of a 3M build's final merge resident.)
type pageCount struct {
	last [nSections]uint64 // per section, 1 + the window counted last (0: none since the release)
}

// The sections of an input a merge reads, for pageCount.
const (
	dictSection = iota
	stringsSection
	blocksSection
	postingsSection
	nSections
)

// touch counts the pages of the windows of bytes [lo, hi] of section sec not counted already.
func (c *pageCount) touch(sec int, lo, hi uint64) uint64 {
	hi = max(hi, lo) // offsets a damaged segment gives backwards: one window, not 2^64
	a, b := lo>>16, hi>>16
	n := b - a + 1
	if l := c.last[sec]; l > 0 && a <= l-1 && l-1 <= b {
		n-- // the window read last is mapped still
	}
	c.last[sec] = b + 1
	return 16 * n
}

// term counts the pages reading dictionary entry i of s, its string, block entries and
// postings maps.
func (c *pageCount) term(s *Segment, i int, ti termInfo) uint64 {
	e := s.tr.dictOff + uint64(i)*dictEntrySize
	str := s.tr.stringsOff + binary.LittleEndian.Uint64(s.dict[i*dictEntrySize:])
	n := c.touch(dictSection, e, e+dictEntrySize-1) + c.touch(stringsSection, str, str)
	if ti.nblocks > 0 {
		last := ti.firstBlock + ti.nblocks - 1
		blk := s.tr.blocksOff + ti.firstBlock*blockEntrySize
		n += c.touch(blocksSection, blk, blk+ti.nblocks*blockEntrySize-1)
		n += c.touch(postingsSection, s.tr.postingsOff+s.blockAt(ti.firstBlock).off, s.tr.postingsOff+max(s.blockEnd(last), 1)-1)
	}
	return n
}

func mergeWrite(ctx context.Context, w io.Writer, segs []*Segment, opts BuilderOptions, st *BuildStats) error {
	fw, err := framing.NewWriter(w, opts.format())
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fw, 1<<16)
	payloadOff := func() uint64 { return fw.Offset() + uint64(bw.Buffered()) - framing.HeaderSize }

	bases := make([]uint32, len(segs))
	var tokens uint64
	for i, s := range segs {
		if i > 0 {
			bases[i] = bases[i-1] + uint32(segs[i-1].tr.docs)
		}
		tokens += s.tr.tokens
	}
	splits, err := splitTerms(segs, opts.MergeWorkers)
	if err != nil {
		return err
	}
	ranges := make([]*termRange, len(splits)+1)
	st.Ranges = len(ranges)
	defer func() {
		for _, r := range ranges {
			if r != nil {
				r.close()
			}
		}
	}()
	for i := range ranges {
		r := &termRange{segs: segs, bases: bases, varint: opts.varintBlocks}
		if i > 0 {
			r.lo = splits[i-1]
		}
		if i < len(splits) {
			r.hi = splits[i]
		}
		// The first range writes its postings straight into the segment; the others into
		// temporary files, copied after it.
		var out io.Writer = bw
		off := payloadOff
		if i > 0 {
			out, off = nil, nil
		}
		ranges[i] = r // closed by the deferred function, opened or not
		if err := r.open(opts.TempDir, out, off); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, r := range ranges {
		g.Go(func() error { return r.merge(gctx) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// The ranges must meet: where one stopped in each dictionary, the next started (a
	// dictionary out of order could have its terms skipped or merged twice).
	for i := 1; i < len(ranges); i++ {
		for j, end := range ranges[i-1].heads {
			if start := ranges[i].starts[j]; start != end {
				return segs[j].corrupt("term %d: dictionary out of byte order (one range of the merge stopped at term %d)", start, end)
			}
		}
	}

	var tr trailer
	tr.docs, tr.tokens = uint64(st.Docs), tokens
	for _, r := range ranges {
		tr.terms += r.terms
		st.Postings += r.postings
	}
	// postings of the ranges after the first
	for _, r := range ranges[1:] {
		r.postBase = payloadOff()
		if err := copyTemp(bw, r.tws[postingsTemp], r.temps[postingsTemp]); err != nil {
			return err
		}
	}
	// block entries, each range's offsets moved by where its postings landed
	tr.blocksOff = payloadOff()
	for _, r := range ranges {
		err := copyEntries(bw, r.tws[blocksTemp], r.temps[blocksTemp], blockEntrySize, func(e []byte) error {
			binary.LittleEndian.PutUint64(e[4:], binary.LittleEndian.Uint64(e[4:])+r.postBase)
			return nil
		})
		if err != nil {
			return err
		}
	}
	tr.frontierOff = payloadOff()
	for _, r := range ranges {
		if err := copyTemp(bw, r.tws[frontierTemp], r.temps[frontierTemp]); err != nil {
			return err
		}
	}
	// dictionary entries, each range's string, block and frontier indexes moved by the ranges
	// before it
	tr.dictOff = payloadOff()
	var strBase, blockBase uint64
	for _, r := range ranges {
		frontBase := tr.frontier
		err := copyEntries(bw, r.tws[dictTemp], r.temps[dictTemp], dictEntrySize, func(e []byte) error {
			binary.LittleEndian.PutUint64(e[0:], binary.LittleEndian.Uint64(e[0:])+strBase)
			binary.LittleEndian.PutUint64(e[16:], binary.LittleEndian.Uint64(e[16:])+blockBase)
			front := uint64(binary.LittleEndian.Uint32(e[24:])) + frontBase
			if front >= 1<<32 {
				return fmt.Errorf("more than %d frontier pairs", uint64(1<<32-1))
			}
			binary.LittleEndian.PutUint32(e[24:], uint32(front))
			return nil
		})
		if err != nil {
			return err
		}
		strBase += r.strBytes
		blockBase += r.tw.nblocks
		tr.frontier += r.tw.frontPairs
	}
	tr.blocks = blockBase
	tr.stringsOff = payloadOff()
	for _, r := range ranges {
		if err := copyTemp(bw, r.tws[stringsTemp], r.temps[stringsTemp]); err != nil {
			return err
		}
	}
	st.Terms, st.Tokens = int(tr.terms), int64(tokens)
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
