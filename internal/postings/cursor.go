package postings

import "math"

// exhausted is the ordinal of a cursor past its last posting; Builder keeps ordinals below it.
const exhausted = math.MaxUint32

// cursor walks the postings of one term of one segment in ordinal order, decoding one block
// at a time. A decoding error leaves the cursor exhausted with err set.
type cursor struct {
	s       *Segment
	ti      termInfo
	blk     uint64 // block of the term the cursor is in
	decoded bool   // whether blk's postings are in ords/tfs
	n, i    int
	cur     uint32 // current ordinal, valid when decoded
	last    uint32 // last ordinal of the decoded block
	err     error
	// the bound of block ubBlk-1's postings, cached by searchSegment (0: none yet)
	ubBlk uint64
	ub    float64
	ords  [BlockSize]uint32
	tfs   [BlockSize]uint32 // valid unless freqSrc is set: read them through freqs
	// freqSrc holds a packed block's frequencies, of width freqWidth, until freqs unpacks
	// them: a non-essential term's block is decoded to look candidates up, and 34% of the
	// blocks decoded in bench scale's 1M queries (39% at 10M) hold none of the candidates, so
	// their frequencies are never read.
	freqSrc   []byte
	freqWidth uint
}

// freqs returns the term frequencies of the decoded block, unpacking them on first use.
func (c *cursor) freqs() *[BlockSize]uint32 {
	if c.freqSrc != nil {
		unpackFreqs(c.freqSrc, c.n, c.freqWidth, &c.tfs)
		c.freqSrc = nil
	}
	return &c.tfs
}

func newCursor(s *Segment, ti termInfo) *cursor {
	c := &cursor{s: s, ti: ti}
	c.decode()
	return c
}

// newCursorAt returns a cursor at ti's first posting at or after lo: the block is found by
// binary search over the term's block entries, so a range search starting in the middle of a
// long list does not walk its blocks one by one.
func newCursorAt(s *Segment, ti termInfo, lo uint32) *cursor {
	if lo == 0 {
		return newCursor(s, ti)
	}
	c := &cursor{s: s, ti: ti}
	lo64, hi := uint64(0), ti.nblocks
	for lo64 < hi {
		mid := (lo64 + hi) / 2
		if s.blockAt(ti.firstBlock+mid).last < lo {
			lo64 = mid + 1
		} else {
			hi = mid
		}
	}
	c.blk = lo64
	c.decode()
	if c.cur != exhausted {
		c.advance(lo)
	}
	return c
}

// tf is the term frequency at the current posting.
func (c *cursor) tf() uint32 { return c.freqs()[c.i] }

func (c *cursor) finish() { c.cur, c.decoded, c.blk = exhausted, true, c.ti.nblocks }

// next moves to the following posting.
func (c *cursor) next() {
	if c.cur == exhausted {
		return
	}
	c.i++
	if c.i < c.n {
		c.cur = c.ords[c.i]
		return
	}
	c.blk++
	c.decode()
}

// shallow moves to the block that may hold target without decoding it, and returns that
// block's entry; ok is false when no block of the term reaches target.
func (c *cursor) shallow(target uint32) (e blockEntry, ok bool) {
	if c.cur == exhausted {
		return e, false
	}
	for c.blk < c.ti.nblocks {
		e = c.s.blockAt(c.ti.firstBlock + c.blk)
		if e.last >= target {
			return e, true
		}
		c.blk++
		c.decoded = false
	}
	c.finish()
	return e, false
}

// advance moves to the first posting at or after target.
func (c *cursor) advance(target uint32) {
	if c.decoded && c.cur >= target {
		return
	}
	if _, ok := c.shallow(target); !ok {
		return
	}
	if !c.decoded {
		c.decode()
		if c.cur == exhausted {
			return
		}
	}
	for c.ords[c.i] < target {
		c.i++ // the block's last ordinal is >= target, so this stops inside it
	}
	c.cur = c.ords[c.i]
}

// decode decodes block c.blk and positions the cursor at its first posting.
func (c *cursor) decode() {
	if c.blk >= c.ti.nblocks {
		c.finish()
		return
	}
	s := c.s
	b := c.ti.firstBlock + c.blk
	e := s.blockAt(b)
	end := s.blockEnd(b)
	if e.off > end || end > uint64(len(s.postings)) {
		c.fail("block %d: bytes [%d, %d) outside the %d-byte postings section", b, e.off, end, len(s.postings))
		return
	}
	// The term's next block starts where this one ends: its first four lines, most of a
	// packed block, are asked for now, so that their read from memory overlaps this block's
	// work. At 10M the blocks a query visits are not in the build machine's caches, and a
	// 512-byte hint did no better (docs/benchmarks.md).
	if c.blk+1 < c.ti.nblocks {
		prefetchLines(s.postings[end:min(end+256, uint64(len(s.postings)))])
	}
	n := BlockSize
	if c.blk == c.ti.nblocks-1 {
		n = int(uint64(c.ti.df) - c.blk*BlockSize)
	}
	next := uint64(0)
	if c.blk > 0 {
		next = uint64(s.blockAt(b-1).last) + 1
	}
	if s.packed != nil {
		c.decodePacked(b, e, end, n, next)
		return
	}
	c.freqSrc = nil // the frequencies below are decoded now (a segment never mixes the formats)
	buf := s.postings[e.off:end]
	p := 0
	for j := 0; j < n; j++ {
		var gap, tf uint32
		if p+1 < len(buf) && buf[p]|buf[p+1] < 0x80 && buf[p+1] != 0 {
			// Most postings are a one-byte gap and a one-byte frequency, decoded here without
			// uvarint32's loop (decoding was 14% of the CPU of the slowest queries at 10M).
			gap, tf = uint32(buf[p]), uint32(buf[p+1])
			p += 2
		} else {
			var k int
			if gap, k = uvarint32(buf[p:]); k <= 0 {
				c.fail("block %d: posting %d: bad varint", b, j)
				return
			}
			p += k
			if tf, k = uvarint32(buf[p:]); k <= 0 || tf == 0 {
				c.fail("block %d: posting %d: bad term frequency", b, j)
				return
			}
			p += k
		}
		ord := next + uint64(gap)
		if ord >= s.tr.docs {
			c.fail("block %d: posting %d: ordinal %d of %d passages", b, j, ord, s.tr.docs)
			return
		}
		c.ords[j], c.tfs[j] = uint32(ord), tf
		next = ord + 1
	}
	if c.ords[n-1] != e.last || p != len(buf) {
		c.fail("block %d: ends at ordinal %d after %d of %d bytes, its entry says ordinal %d", b, c.ords[n-1], p, len(buf), e.last)
		return
	}
	c.n, c.i, c.decoded, c.cur, c.last = n, 0, true, c.ords[0], e.last
}

// decodePacked is decode of a packed block (blockcodec.go): block b, entry e, ending at
// byte end, of n postings after ordinal next.
func (c *cursor) decodePacked(b uint64, e blockEntry, end uint64, n int, next uint64) {
	s := c.s
	size := end - e.off
	if size < 2 {
		c.fail("block %d: %d bytes, shorter than its widths", b, size)
		return
	}
	g, w := uint(s.packed[e.off]), uint(s.packed[e.off+1])
	if g > maxGapWidth || w > maxFreqWidth || uint64(packedLen(n, g, w)) != size {
		c.fail("block %d: %d bytes with gap width %d and frequency width %d for %d postings", b, size, g, w, n)
		return
	}
	src := s.packed[e.off+2:]
	last := unpackOrds(src, n, g, next, &c.ords)
	if last >= s.tr.docs || uint32(last) != e.last {
		c.fail("block %d: ends at ordinal %d, its entry says ordinal %d, of %d passages", b, last, e.last, s.tr.docs)
		return
	}
	c.freqSrc, c.freqWidth = src[(n*int(g)+7)/8:], w
	c.n, c.i, c.decoded, c.cur, c.last = n, 0, true, c.ords[0], e.last
}

func (c *cursor) fail(format string, args ...any) {
	if c.err == nil {
		c.err = c.s.corrupt(format, args...)
	}
	c.finish()
}

// uvarint32 decodes a uvarint of at most 32 bits; k <= 0 on a short or overlong input.
func uvarint32(b []byte) (v uint32, k int) {
	var x uint64
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if x > math.MaxUint32 {
				return 0, -1
			}
			return uint32(x), i + 1
		}
	}
	return 0, -1
}
