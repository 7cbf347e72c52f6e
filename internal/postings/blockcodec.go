package postings

import (
	"encoding/binary"
	"math/bits"
)

// A block of a version 3 segment is frame-of-reference bit packing, as Lucene's ForUtil
// packs its blocks: every gap of the block takes the bits of the block's largest gap, every
// frequency (less one) those of its largest:
//
//	gap width g u8 | frequency width w u8 | n gaps, g bits each | n (frequency - 1), w bits each
//
// Each run of values is packed from the lowest bit of its first byte up and padded to a
// whole byte. A gap is ord - next as in version 2 (next: one past the term's previous
// ordinal), so a run of consecutive passages packs into zero bits, and a block whose
// passages each hold the term once carries no frequency bits at all.
//
// Why: version 2's uvarint pairs took a branch per byte whose outcome the data decides:
// decoding them was a quarter of a query's CPU at 1M and 10M passages (24% and 25% of a
// profile). A packed block decodes with none (unpack), and most blocks shrink: a common
// term's gaps fit in a few bits, its frequencies in one or two. Measured at 10M: the
// decoding took 0.69 times the CPU, the segment 0.66 times the bytes.

// Widths a packed block may declare: a gap is below 2^32 (ordinals are u32); a frequency
// less one below 2^31, so that the frequency itself never wraps to 0.
const (
	maxGapWidth  = 32
	maxFreqWidth = 31
)

// packPad is how many bytes past a packed block's end unpack may read (never use): every
// value is read with one 8-byte load. A segment's payload always holds more than this after
// its postings section (the tables and the trailer), so Segment.packed, the payload from
// the postings' start, covers it.
const packPad = 8

// packedLen is the byte length of a packed block of n postings with widths g and w.
func packedLen(n int, g, w uint) int {
	return 2 + (n*int(g)+7)/8 + (n*int(w)+7)/8
}

// appendPackedBlock appends the packed block of the postings ords (increasing, the first at
// or after next) and their frequencies tfs (each at least 1) to dst; gaps is scratch of at
// least len(ords) values.
func appendPackedBlock(dst []byte, ords, tfs, gaps []uint32, next uint32) []byte {
	gaps = gaps[:len(ords)]
	var gmax, fmax uint32
	for i, o := range ords {
		gaps[i] = o - next
		gmax |= gaps[i]
		next = o + 1
	}
	for _, f := range tfs {
		fmax |= f - 1
	}
	g, w := uint(bits.Len32(gmax)), uint(bits.Len32(fmax))
	dst = append(dst, byte(g), byte(w))
	dst = appendPacked(dst, gaps, 0, g)
	return appendPacked(dst, tfs, 1, w)
}

// appendPacked appends each of vals less less, at width bits each, padded to a whole byte.
func appendPacked(dst []byte, vals []uint32, less uint32, width uint) []byte {
	if width == 0 {
		return dst
	}
	var acc uint64
	var nb uint
	for _, v := range vals {
		acc |= uint64(v-less) << nb
		for nb += width; nb >= 8; nb -= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
		}
	}
	if nb > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// unpackOrds decodes n gaps of width bits from src into ordinals after next and returns the
// last ordinal, in 64 bits: the caller checks it against the segment's passages, and since
// the ordinals increase, that one check covers every ordinal. src holds the packed gaps and
// at least packPad bytes more (read, never used). No branch depends on the values.
func unpackOrds(src []byte, n int, width uint, next uint64, ords *[BlockSize]uint32) uint64 {
	ord := next - 1 // wraps at next 0; the first gap's + 1 wraps it back
	j := 0
	if g := kernelGroups(src, n, width); g > 0 {
		if last, ok := unpackOrdGroups(src, g, width, ord, n, ords); ok {
			ord, j = last, 8*g
		}
	}
	if j == n {
		return ord
	}
	var raw [BlockSize]uint32
	unpack(src, j, n, width, &raw)
	for ; j < n; j++ {
		ord += uint64(raw[j]) + 1
		ords[j] = uint32(ord)
	}
	return ord
}

// unpackFreqs decodes n frequencies less one, of width bits (at most maxFreqWidth), from src,
// which holds at least packPad bytes past them.
func unpackFreqs(src []byte, n int, width uint, tfs *[BlockSize]uint32) {
	g := kernelGroups(src, n, width)
	unpackAddGroups(src, g, width, 1, tfs)
	unpack(src, 8*g, n, width, tfs)
	for j := 8 * g; j < n; j++ {
		tfs[j]++
	}
}

// unpack decodes values j0 to n-1 (j0 a multiple of 8) of width bits (at most 32) from src,
// which holds at least packPad bytes past them. A value never straddles more than one 8-byte
// load, and one load serves as many values as it holds whole: eight up to 8 bits (a group of
// eight fills exactly width bytes), four up to 16, two up to 29: one case each, unrolled by
// hand (the compiler does not unroll loops). The shifts are masked to 63 so that the compiler
// emits a bare shift, without its guard for counts of 64 and more. The amd64 kernels
// (blockcodec_amd64.s) take the groups of eight they can before it.
func unpack(src []byte, j0, n int, width uint, dst *[BlockSize]uint32) {
	if width == 0 {
		clear(dst[j0:n])
		return
	}
	mask := uint64(1)<<width - 1
	w := width & 63
	j := j0
	switch {
	case width <= 8:
		for ; j+8 <= n; j += 8 {
			x := binary.LittleEndian.Uint64(src[j*int(width)>>3:])
			d := dst[j : j+8 : j+8]
			d[0] = uint32(x & mask)
			d[1] = uint32(x >> w & mask)
			d[2] = uint32(x >> (2 * w & 63) & mask)
			d[3] = uint32(x >> (3 * w & 63) & mask)
			d[4] = uint32(x >> (4 * w & 63) & mask)
			d[5] = uint32(x >> (5 * w & 63) & mask)
			d[6] = uint32(x >> (6 * w & 63) & mask)
			d[7] = uint32(x >> (7 * w & 63) & mask)
		}
	case width <= 16:
		for ; j+4 <= n; j += 4 {
			bit := uint(j) * width
			x := binary.LittleEndian.Uint64(src[bit>>3:]) >> (bit & 7)
			d := dst[j : j+4 : j+4]
			d[0] = uint32(x & mask)
			d[1] = uint32(x >> w & mask)
			d[2] = uint32(x >> (2 * w & 63) & mask)
			d[3] = uint32(x >> (3 * w & 63) & mask)
		}
	case width <= 29:
		for ; j+2 <= n; j += 2 {
			bit := uint(j) * width
			x := binary.LittleEndian.Uint64(src[bit>>3:]) >> (bit & 7)
			d := dst[j : j+2 : j+2]
			d[0] = uint32(x & mask)
			d[1] = uint32(x >> w & mask)
		}
	}
	for ; j < n; j++ {
		bit := uint(j) * width
		dst[j] = uint32(binary.LittleEndian.Uint64(src[bit>>3:]) >> (bit & 7) & mask)
	}
}
