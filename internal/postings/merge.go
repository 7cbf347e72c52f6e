package postings

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/filesum"
	"github.com/kairos-rag/kairos/internal/framing"
	"golang.org/x/sync/errgroup"
)

// Finish merges the runs into the segment file, written atomically, and releases the
// temporary files.
func (b *Builder) Finish(ctx context.Context) (*BuildStats, error) {
	if b.err != nil {
		b.Abort()
		return nil, b.err
	}
	if b.done {
		return nil, errors.New("postings builder: Finish after Finish or Abort")
	}
	defer b.Abort()
	if err := b.spill(); err != nil {
		return nil, err
	}
	b.buf, b.sorted = nil, nil // the merge needs neither: memory for the next segment's builder
	if err := b.docsW.Flush(); err != nil {
		return nil, fmt.Errorf("postings builder: passage table: %w", err)
	}
	st := &BuildStats{Docs: int(b.n), Terms: b.vocab.len(), Postings: b.postings, Tokens: b.tokens, Runs: len(b.runs)}
	err := atomicfile.Write(b.path, atomicfile.Options{}, func(w io.Writer) error {
		sw := filesum.New(w) // so that the generation's checksums need not read it back
		if err := b.write(ctx, sw, st); err != nil {
			return err
		}
		st.Bytes, st.SHA256 = sw.Size(), sw.Sum()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("writing postings segment %s: %w", b.path, err)
	}
	b.opts.Logger.Info("postings segment written", "path", b.path, "passages", st.Docs, "terms", st.Terms, "postings", st.Postings, "runs", st.Runs, "bytes", st.Bytes)
	return st, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// countedBuffer is a buffered writer over f and the offset of its next byte: the temporary
// postings of a range of terms merged beside others, whose block entries hold their offsets.
func countedBuffer(f *os.File) (*bufio.Writer, func() uint64) {
	cw := &countingWriter{w: f}
	bw := bufio.NewWriterSize(cw, 1<<16)
	return bw, func() uint64 { return uint64(cw.n) + uint64(bw.Buffered()) }
}

// runReader streams the groups of one run.
type runReader struct {
	r    *bufio.Reader
	head uint32 // term id of the next group
	left uint64 // postings left in the current group
	prev uint32 // previous ordinal of the current group
	eof  bool
}

func (r *runReader) nextGroup() error {
	t, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		r.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return err
	}
	r.head, r.left, r.prev = uint32(t), n, 0
	return nil
}

func (r *runReader) next() (posting, error) {
	var v [3]uint64
	for i := range v {
		x, err := binary.ReadUvarint(r.r)
		if err != nil {
			return posting{}, err
		}
		v[i] = x
	}
	r.prev += uint32(v[0])
	r.left--
	return posting{term: r.head, ord: r.prev, tf: uint32(v[1]), len: uint32(v[2])}, nil
}

// termMeta is what the dictionary records of a term once its postings are written.
type termMeta struct {
	firstBlock uint64
	frontStart uint32
	frontN     uint32
}

// write streams the segment into w: the postings merged from the runs, then the tables. It
// records in st the ranges of terms it merged at once.
func (b *Builder) write(ctx context.Context, w io.Writer, st *BuildStats) error {
	fw, err := framing.NewWriter(w, b.opts.format())
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fw, 1<<16)
	payloadOff := func() uint64 { return fw.Offset() + uint64(bw.Buffered()) - framing.HeaderSize }

	nterms := b.vocab.len()
	metas := make([]termMeta, nterms)
	// The postings go out in byte order of the terms, as each run holds them (spill), and as
	// the dictionary lists them: a merge reads the segment from start to end.
	order := b.vocab.sorted()
	ranges := b.runRanges(order)
	st.Ranges = len(ranges)
	defer func() {
		for _, r := range ranges {
			r.close()
		}
	}()
	for i, r := range ranges {
		// The first range writes its postings straight into the segment; the others into
		// temporary files, copied after it.
		var out io.Writer = bw
		off := payloadOff
		if i > 0 {
			out, off = nil, nil
		}
		if err := r.open(b.opts.TempDir, out, off, b.opts.varintBlocks); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, r := range ranges {
		g.Go(func() error { return b.mergeRuns(gctx, r, order, metas) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// Each range's terms count their first blocks and frontier pairs from the range's start.
	var blocks, pairs uint64
	for _, r := range ranges {
		for _, t := range order[r.lo:r.hi] {
			start := uint64(metas[t].frontStart) + pairs
			if start >= 1<<32 {
				return fmt.Errorf("more than %d frontier pairs", uint64(1<<32-1))
			}
			metas[t].firstBlock += blocks
			metas[t].frontStart = uint32(start)
		}
		blocks += r.tw.nblocks
		pairs += r.tw.frontPairs
	}
	var tr trailer
	tr.docs, tr.terms, tr.blocks, tr.tokens = uint64(b.n), uint64(nterms), blocks, uint64(b.tokens)
	tr.frontier = pairs

	// postings of the ranges after the first
	for _, r := range ranges[1:] {
		r.postBase = payloadOff()
		if err := copyTemp(bw, r.postW, r.postF); err != nil {
			return err
		}
	}
	// block entries, each range's offsets moved by where its postings landed
	tr.blocksOff = payloadOff()
	for _, r := range ranges {
		err := copyEntries(bw, r.tw.blocks, r.blocksF, blockEntrySize, func(e []byte) error {
			binary.LittleEndian.PutUint64(e[4:], binary.LittleEndian.Uint64(e[4:])+r.postBase)
			return nil
		})
		if err != nil {
			return fmt.Errorf("copying block table: %w", err)
		}
	}
	// frontier
	tr.frontierOff = payloadOff()
	for _, r := range ranges {
		if _, err := bw.Write(r.tw.frontier); err != nil {
			return err
		}
	}
	// dict, in byte order of the terms
	tr.dictOff = payloadOff()
	var e [dictEntrySize]byte
	var strOff uint64
	for _, id := range order {
		m := metas[id]
		binary.LittleEndian.PutUint64(e[0:], strOff)
		binary.LittleEndian.PutUint32(e[8:], uint32(len(b.vocab.term(id))))
		binary.LittleEndian.PutUint32(e[12:], b.df[id])
		binary.LittleEndian.PutUint64(e[16:], m.firstBlock)
		binary.LittleEndian.PutUint32(e[24:], m.frontStart)
		binary.LittleEndian.PutUint32(e[28:], m.frontN)
		if _, err := bw.Write(e[:]); err != nil {
			return err
		}
		strOff += uint64(len(b.vocab.term(id)))
	}
	tr.stringsOff = payloadOff()
	for _, id := range order {
		if _, err := bw.Write(b.vocab.term(id)); err != nil {
			return err
		}
	}
	// keys, then lengths, from the passage table
	for i, sec := range []*uint64{&tr.keysOff, &tr.lensOff} {
		*sec = payloadOff()
		if err := copyColumn(bw, b.docs, i); err != nil {
			return fmt.Errorf("copying passage table: %w", err)
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

// copyColumn copies column col (0: key, 1: length) of the 8-byte records of f to w.
func copyColumn(w io.Writer, f *os.File, col int) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<16)
	var rec [8]byte
	for {
		if _, err := io.ReadFull(r, rec[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if _, err := w.Write(rec[4*col : 4*col+4]); err != nil {
			return err
		}
	}
}

// termWriter encodes the postings of one term at a time into blocks.
type termWriter struct {
	out    io.Writer
	blocks *bufio.Writer
	off    func() uint64 // payload offset of the next byte of out

	nblocks    uint64
	frontier   []byte    // the terms' frontier pairs not yet written to frontierW
	frontierW  io.Writer // nil: frontier keeps all the pairs
	frontPairs uint64    // frontier pairs of all terms so far

	// the current term
	count     int64
	last      uint32 // previous ordinal of the term
	next      uint32 // one past the last ordinal of the previous block
	ords, tfs []uint32
	maxTF     uint32
	minLen    uint32
	// the least length of the term's postings of each frequency: in a table for the small
	// frequencies almost every posting has (no map lookup per posting), in a map for the
	// rest; seenTF lists the frequencies met, for end
	minLenSmall [smallTF]uint32
	smallSeen   uint64 // bit tf: minLenSmall[tf] holds a length
	seenTF      []uint32
	minLenBig   map[uint32]uint32
	frontStart  uint32
	frontN      uint32
	enc         []byte
	gaps        []uint32 // appendPackedBlock's scratch
	varint      bool     // uvarint blocks (BuilderOptions.varintBlocks)
}

func (tw *termWriter) begin() {
	tw.count, tw.next = 0, 0
	tw.ords, tw.tfs = tw.ords[:0], tw.tfs[:0]
	tw.smallSeen = 0
	tw.seenTF = tw.seenTF[:0]
	if len(tw.minLenBig) > 64 || tw.minLenBig == nil {
		tw.minLenBig = map[uint32]uint32{} // clear would walk all the buckets a big term grew
	}
	clear(tw.minLenBig)
	tw.resetBlock()
}

// smallTF bounds the frequencies whose least length termWriter keeps in a table (a bit
// each in smallSeen).
const smallTF = 64

// noteLength records a posting of frequency tf in a passage of length n for the frontier.
func (tw *termWriter) noteLength(tf, n uint32) {
	if tf < smallTF {
		if tw.smallSeen&(1<<tf) == 0 {
			tw.smallSeen |= 1 << tf
			tw.seenTF = append(tw.seenTF, tf)
			tw.minLenSmall[tf] = n
		} else if n < tw.minLenSmall[tf] {
			tw.minLenSmall[tf] = n
		}
		return
	}
	if l, ok := tw.minLenBig[tf]; !ok {
		tw.seenTF = append(tw.seenTF, tf)
		tw.minLenBig[tf] = n
	} else if n < l {
		tw.minLenBig[tf] = n
	}
}

// minLenOf is the least length noted for frequency tf.
func (tw *termWriter) minLenOf(tf uint32) uint32 {
	if tf < smallTF {
		return tw.minLenSmall[tf]
	}
	return tw.minLenBig[tf]
}

func (tw *termWriter) resetBlock() {
	tw.ords, tw.tfs = tw.ords[:0], tw.tfs[:0]
	tw.maxTF, tw.minLen = 0, ^uint32(0)
}

func (tw *termWriter) add(p posting) error {
	if p.tf == 0 || (tw.count > 0 && p.ord <= tw.last) {
		return fmt.Errorf("run posting out of order or empty (term %d, ordinal %d)", p.term, p.ord)
	}
	tw.count++
	tw.last = p.ord
	tw.ords = append(tw.ords, p.ord)
	tw.tfs = append(tw.tfs, p.tf)
	tw.maxTF = max(tw.maxTF, p.tf)
	tw.minLen = min(tw.minLen, p.len)
	tw.noteLength(p.tf, p.len)
	if len(tw.ords) == BlockSize {
		return tw.flushBlock()
	}
	return nil
}

func (tw *termWriter) flushBlock() error {
	if len(tw.ords) == 0 {
		return nil
	}
	var e [blockEntrySize]byte
	binary.LittleEndian.PutUint32(e[0:], tw.ords[len(tw.ords)-1])
	binary.LittleEndian.PutUint64(e[4:], tw.off())
	binary.LittleEndian.PutUint32(e[12:], tw.maxTF)
	binary.LittleEndian.PutUint32(e[16:], tw.minLen)
	if _, err := tw.blocks.Write(e[:]); err != nil {
		return err
	}
	if tw.varint {
		tw.enc = tw.enc[:0]
		for i, o := range tw.ords {
			tw.enc = binary.AppendUvarint(tw.enc, uint64(o-tw.next))
			tw.enc = binary.AppendUvarint(tw.enc, uint64(tw.tfs[i]))
			tw.next = o + 1
		}
	} else {
		if tw.gaps == nil {
			tw.gaps = make([]uint32, BlockSize)
		}
		tw.enc = appendPackedBlock(tw.enc[:0], tw.ords, tw.tfs, tw.gaps, tw.next)
		tw.next = tw.ords[len(tw.ords)-1] + 1
	}
	if _, err := tw.out.Write(tw.enc); err != nil {
		return err
	}
	tw.nblocks++
	tw.resetBlock()
	return nil
}

// end writes the term's last block and its frontier: the (tf, length) pairs not dominated by
// another with a tf at least as large and a length at most as small. BM25 grows with tf and
// falls with length, so the largest contribution of the term is at one of these pairs.
func (tw *termWriter) end() error {
	if err := tw.flushBlock(); err != nil {
		return err
	}
	tfs := tw.seenTF
	slices.Sort(tfs)
	if tw.frontPairs >= 1<<32 {
		return fmt.Errorf("more than %d frontier pairs", uint64(1<<32-1))
	}
	tw.frontStart = uint32(tw.frontPairs)
	tw.frontN = 0
	best := ^uint32(0)
	for i := len(tfs) - 1; i >= 0; i-- {
		l := tw.minLenOf(tfs[i])
		if l < best {
			best = l
			tw.frontier = binary.LittleEndian.AppendUint32(tw.frontier, tfs[i])
			tw.frontier = binary.LittleEndian.AppendUint32(tw.frontier, l)
			tw.frontN++
		}
	}
	tw.frontPairs += uint64(tw.frontN)
	if tw.frontierW != nil && len(tw.frontier) >= 1<<16 {
		if _, err := tw.frontierW.Write(tw.frontier); err != nil {
			return err
		}
		tw.frontier = tw.frontier[:0]
	}
	return nil
}
