package postings

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
)

// runRange merges the runs' groups of the terms order[lo:hi], those whose first byte is in
// [first, end), into sections of its own, as termRange does for segments: Finish merges
// several ranges at once (BuilderOptions.MergeWorkers), one a core, and concatenates them,
// so that the segment is byte for byte the one a single range writes. Its block entries and
// its terms' first blocks and frontier starts count from the range's start; write moves them.
type runRange struct {
	lo, hi     int // the range's terms, indexes into the byte order of the vocabulary
	first, end int // their first bytes (0 for the empty term)
	tw         *termWriter
	blocksF    *os.File
	postF      *os.File      // nil for the range that writes into the segment itself
	postW      *bufio.Writer // postF's writer
	postBase   uint64        // payload offset of the range's postings in the segment
}

// runRanges cuts the terms of order (the vocabulary in byte order) into at most MergeWorkers
// ranges of about as many postings each, where a term's first byte changes: the places
// spill marks in every run. A language's first letters are uneven: on English text (the
// words of 100,000 bench passages, stop words out) two ranges hold 52% and 48% of the
// postings, four 20% to 28%.
func (b *Builder) runRanges(order []uint32) []*runRange {
	var weight [256]int64
	for _, t := range order {
		weight[firstByte(b.vocab.term(t))] += int64(b.df[t])
	}
	var total int64
	for _, w := range weight {
		total += w
	}
	parts := int64(max(b.opts.MergeWorkers, 1))
	ranges := []*runRange{{first: 0}}
	var sum int64
	for c := 0; c < 256; c++ {
		k := int64(len(ranges)) // the ranges closed so far, plus the open one
		if k < parts && sum > 0 && sum >= total*k/parts {
			ranges[len(ranges)-1].end = c
			ranges = append(ranges, &runRange{first: c})
		}
		sum += weight[c]
	}
	ranges[len(ranges)-1].end = 256
	at := 0 // the ranges' terms: order is sorted, so each first byte's terms are contiguous
	for _, r := range ranges {
		r.lo = at
		for at < len(order) && firstByte(b.vocab.term(order[at])) < r.end {
			at++
		}
		r.hi = at
	}
	// A range without terms (one first byte holding more than a range's share) joins its
	// neighbour, so that every range has work and they still meet.
	kept := ranges[:1]
	for _, r := range ranges[1:] {
		last := kept[len(kept)-1]
		switch {
		case r.lo == r.hi:
			last.end = r.end
		case last.lo == last.hi:
			r.first = last.first
			kept[len(kept)-1] = r
		default:
			kept = append(kept, r)
		}
	}
	return kept
}

// firstByte is the byte a term's run marks place it by: its first, 0 for the empty term
// (which sorts first).
func firstByte(term []byte) int {
	if len(term) == 0 {
		return 0
	}
	return int(term[0])
}

// open creates the range's temporary files. The range writes its postings to out at the
// payload offsets off reports, or with out nil to a temporary file of its own.
func (r *runRange) open(dir string, out io.Writer, off func() uint64, varint bool) error {
	f, err := tempFile(dir, "blocks")
	if err != nil {
		return err
	}
	r.blocksF = f
	if out == nil {
		if r.postF, err = tempFile(dir, "range-postings"); err != nil {
			return err
		}
		r.postW, off = countedBuffer(r.postF)
		out = r.postW
	}
	r.tw = &termWriter{out: out, blocks: bufio.NewWriterSize(f, 1<<16), off: off, varint: varint}
	return nil
}

func (r *runRange) close() {
	for _, f := range []*os.File{r.blocksF, r.postF} {
		if f != nil {
			f.Close()
		}
	}
}

// mergeRuns writes the postings of r's terms, merged from every run's section of r's first
// bytes, and their metas (the terms are r's alone: ranges write disjoint entries).
func (b *Builder) mergeRuns(ctx context.Context, r *runRange, order []uint32, metas []termMeta) error {
	readers := make([]*runReader, len(b.runs))
	for i, f := range b.runs {
		m := &b.marks[i]
		sec := io.NewSectionReader(f, m[r.first], m[r.end]-m[r.first])
		readers[i] = &runReader{r: bufio.NewReaderSize(sec, 1<<16)}
		if err := readers[i].nextGroup(); err != nil {
			return fmt.Errorf("reading run %d: %w", i, err)
		}
	}
	tw := r.tw
	for k, t := range order[r.lo:r.hi] {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tw.begin()
		metas[t].firstBlock = tw.nblocks
		for i, rd := range readers {
			if rd.eof || rd.head != t {
				continue
			}
			for rd.left > 0 {
				p, err := rd.next()
				if err != nil {
					return fmt.Errorf("reading run %d: %w", i, err)
				}
				if err := tw.add(p); err != nil {
					return err
				}
			}
			if err := rd.nextGroup(); err != nil {
				return fmt.Errorf("reading run %d: %w", i, err)
			}
		}
		if tw.count != int64(b.df[t]) {
			return fmt.Errorf("term %q: merged %d postings, counted %d", b.vocab.term(t), tw.count, b.df[t])
		}
		if err := tw.end(); err != nil {
			return err
		}
		metas[t].frontStart, metas[t].frontN = tw.frontStart, tw.frontN
	}
	for i, rd := range readers {
		if !rd.eof {
			return fmt.Errorf("reading run %d: term %d outside the range of first bytes %d to %d, or out of order", i, rd.head, r.first, r.end-1)
		}
	}
	return nil
}
