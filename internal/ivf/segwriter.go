package ivf

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/kairos-rag/kairos/internal/filesum"
)

// pending are the codes a writer assigned since its last list segment, in position order.
type pending struct {
	pos     []uint32
	list    []uint32
	codes   []uint64 // words per entry
	factors []float32
	refine  []uint64 // refineWords(words) per entry, when the index keeps refinement codes
}

func (p *pending) len() int { return len(p.pos) }

// grow makes room for n more entries, with refinement codes when refine, and returns the
// index of the first.
func (p *pending) grow(n, words int, refine bool) int {
	i := len(p.pos)
	p.pos = slices.Grow(p.pos, n)[:i+n]
	p.list = slices.Grow(p.list, n)[:i+n]
	p.codes = slices.Grow(p.codes, n*words)[:(i+n)*words]
	p.factors = slices.Grow(p.factors, n*factorsPer)[:(i+n)*factorsPer]
	if refine {
		rw := refineWords(words)
		p.refine = slices.Grow(p.refine, n*rw)[:(i+n)*rw]
	}
	return i
}

// segmentSource is what a new list segment is made of: older segments and the pending codes,
// merged list by list, each list in position order.
type segmentSource struct {
	segs  []*segment
	p     *pending
	order []int32 // pending entries sorted by list, stable (position order within a list)
	start []int32 // lists+1: the pending entries of list l are order[start[l]:start[l+1]]
}

func newSegmentSource(segs []*segment, p *pending, lists int) *segmentSource {
	s := &segmentSource{segs: segs, p: p, start: make([]int32, lists+1)}
	for _, l := range p.list {
		s.start[l+1]++
	}
	for l := range lists {
		s.start[l+1] += s.start[l]
	}
	s.order = make([]int32, p.len())
	next := slices.Clone(s.start[:lists])
	for i, l := range p.list {
		s.order[next[l]] = int32(i)
		next[l]++
	}
	return s
}

// writeSegment writes the list segment of positions first to first+count-1 from src: header,
// list offsets, then each column list by list (positions, codes, factors, and with refineBits
// 1 the refinement codes), so that each is read sequentially from every source; a list's
// codes are written in blocks (fastscan.go). progress is told the lists done of cols*lists,
// cols the number of columns.
func writeSegment(w *filesum.Writer, src *segmentSource, dim, words, lists, refineBits, first, count int, progress func(done, total int)) error {
	cols := 3
	if refineBits > 0 {
		cols = 4
		for _, s := range src.segs {
			if s.refine == nil {
				return errors.New("ivf: merging a list segment without refinement codes into one with them")
			}
		}
	}
	offsets := make([]uint32, lists+1)
	blocks := 0
	for l := range lists {
		n := int(src.start[l+1] - src.start[l])
		for _, s := range src.segs {
			n += int(s.offsets[l+1] - s.offsets[l])
		}
		offsets[l+1] = offsets[l] + uint32(n)
		blocks += blocksOf(n)
	}
	f := newFrameWriter(w, listsFormat)
	var h [segHeader - 8]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], uint32(dim))
	le.PutUint32(h[4:], uint32(words))
	le.PutUint32(h[8:], uint32(lists))
	le.PutUint32(h[12:], uint32(refineBits))
	le.PutUint64(h[16:], uint64(first))
	le.PutUint64(h[24:], uint64(count))
	le.PutUint64(h[32:], uint64(blocks))
	f.Write(h[:])
	f.Write(bytesOf(offsets))
	f.padTo()
	buf32 := make([]uint32, 0, 4096)
	var codes []uint64 // one list's, in entry order
	var packed []byte  // the same, in blocks
	bufF := make([]float32, 0, 4096)
	flush32 := func() { f.Write(bytesOf(buf32)); buf32 = buf32[:0] }
	flushF := func() { f.Write(bytesOf(bufF)); bufF = bufF[:0] }
	done := 0
	tick := func() {
		done++
		if progress != nil && done%1024 == 0 {
			progress(done, cols*lists)
		}
	}
	for l := range lists {
		for _, s := range src.segs {
			f.Write(bytesOf(s.pos[s.offsets[l]:s.offsets[l+1]]))
		}
		for _, i := range src.order[src.start[l]:src.start[l+1]] {
			if buf32 = append(buf32, src.p.pos[i]); len(buf32) == cap(buf32) {
				flush32()
			}
		}
		flush32()
		tick()
	}
	f.padTo()
	for l := range lists {
		codes = codes[:0]
		for _, s := range src.segs {
			codes = s.listCodes(codes, int32(l))
		}
		for _, i := range src.order[src.start[l]:src.start[l+1]] {
			codes = append(codes, src.p.codes[int(i)*words:int(i+1)*words]...)
		}
		n := len(codes) / words
		size := blocksOf(n) * blockBytes(words)
		packed = slices.Grow(packed[:0], size)[:size]
		packBlocks(packed, codes, n, words)
		f.Write(packed)
		tick()
	}
	f.padTo()
	for l := range lists {
		for _, s := range src.segs {
			f.Write(bytesOf(s.factors[int(s.offsets[l])*factorsPer : int(s.offsets[l+1])*factorsPer]))
		}
		for _, i := range src.order[src.start[l]:src.start[l+1]] {
			if bufF = append(bufF, src.p.factors[int(i)*factorsPer:int(i+1)*factorsPer]...); len(bufF)+factorsPer > cap(bufF) {
				flushF()
			}
		}
		flushF()
		tick()
	}
	f.padTo()
	if refineBits > 0 {
		rw := refineWords(words)
		buf64 := make([]uint64, 0, 4096)
		for l := range lists {
			for _, s := range src.segs {
				f.Write(bytesOf(s.refine[int(s.offsets[l])*rw : int(s.offsets[l+1])*rw]))
			}
			for _, i := range src.order[src.start[l]:src.start[l+1]] {
				if buf64 = append(buf64, src.p.refine[int(i)*rw:int(i+1)*rw]...); len(buf64)+rw > cap(buf64) {
					f.Write(bytesOf(buf64))
					buf64 = buf64[:0]
				}
			}
			f.Write(bytesOf(buf64))
			buf64 = buf64[:0]
			tick()
		}
		f.padTo()
	}
	if progress != nil {
		progress(cols*lists, cols*lists)
	}
	return f.finish()
}
