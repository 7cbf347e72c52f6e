package ivf

import "math/bits"

// A list segment keeps each list's one-bit codes in blocks of blockSize codes, their bytes
// transposed: one 32-byte row holds byte p of all 32 codes of a block, byte 2m of the row that
// of code m and byte 2m+1 that of code 16+m (a list's last block is padded with zero codes). A
// query then turns into one 16-entry table per half byte of a code (the partial sums of its
// quantized dimensions over the four bits), and a block's 32 estimates are table lookups
// (VPSHUFB) added in 16-bit lanes: FAISS's and RaBitQ's "fast scan", which needs AVX2 where
// the popcounts it replaces needed AVX-512's VPOPCNTQ to be fast.

// blockSize is the number of codes in a block.
const blockSize = 32

// scanRun is the most code bytes one call of the kernel sums: each byte adds at most 4*lutBias
// (240) to a 16-bit lane, and 256*240 < 65,536.
const scanRun = 256

// lutBias is added to every table entry so that entries are unsigned: an entry is a sum of
// four terms 2*qq-15 (qq in 0..15), between -60 and 60.
const lutBias = 4 * queryLevels

// blocksOf is the number of blocks of a list of n codes.
func blocksOf(n int) int { return (n + blockSize - 1) / blockSize }

// blockBytes is the size of a block of codes of words words.
func blockBytes(words int) int { return blockSize * words * 8 }

// slotOf is the byte of a code row that holds code m of a block.
func slotOf(m int) int {
	if m < blockSize/2 {
		return 2 * m
	}
	return 2*(m-blockSize/2) + 1
}

// packBlocks writes the n codes of words words in codes into dst as blocksOf(n) blocks.
func packBlocks(dst []byte, codes []uint64, n, words int) {
	bb := blockBytes(words)
	clear(dst[:blocksOf(n)*bb])
	for i := range n {
		row := dst[i/blockSize*bb+slotOf(i%blockSize):]
		for w, x := range codes[i*words : (i+1)*words] {
			for k := range 8 {
				row[(w*8+k)*blockSize] = byte(x >> (8 * k))
			}
		}
	}
}

// unpackBlocks is packBlocks reversed: it appends the n codes held in blocks to codes.
func unpackBlocks(codes []uint64, blocks []byte, n, words int) []uint64 {
	bb := blockBytes(words)
	for i := range n {
		row := blocks[i/blockSize*bb+slotOf(i%blockSize):]
		for w := range words {
			var x uint64
			for k := range 8 {
				x |= uint64(row[(w*8+k)*blockSize]) << (8 * k)
			}
			codes = append(codes, x)
		}
	}
	return codes
}

// prepareTables fills the query's tables for the kernel in use. qc.luts, the assembly's: for
// each code byte p, 64 bytes: the table of its low half (the dimensions 8p to 8p+3) twice, then
// that of its high half twice (the kernel's 32-byte registers look up in each 16-byte lane).
// Entry x of a half's table is lutBias plus the sum of 2*qq_i-15 over the dimensions i whose
// bit is set in x, so that the sum of the tables over a code's bytes is 2W-15pc (queryCode.signs)
// plus lutBias*2*bytes. qc.pairs, the portable kernel's (preparePairs): for each code
// byte, the sum of both halves' entries for each of its 256 values, one lookup a byte.
func (qc *queryCode) prepareTables() {
	cb := qc.words * 8
	if cap(qc.luts) < cb*64 {
		qc.luts = make([]byte, cb*64)
	}
	qc.luts = qc.luts[:cb*64]
	var term [8]int
	for p := range cb {
		w, sh := p/8, uint(p%8)*8
		for t := range 8 {
			qq := 0
			for j := range queryBits {
				qq |= int(qc.planes[j*qc.words+w]>>(sh+uint(t))&1) << j
			}
			term[t] = 2*qq - queryLevels
		}
		for half := range 2 {
			var tab [16]int
			tab[0] = lutBias
			for x := 1; x < 16; x++ {
				tab[x] = tab[x&(x-1)] + term[4*half+bits.TrailingZeros(uint(x))]
			}
			out := qc.luts[p*64+half*32:]
			for x, v := range tab {
				out[x], out[16+x] = byte(v), byte(v)
			}
		}
	}
	if portableScan() {
		qc.preparePairs()
	}
}

// preparePairs fills qc.pairs from qc.luts.
func (qc *queryCode) preparePairs() {
	cb := qc.words * 8
	if cap(qc.pairs) < cb*256 {
		qc.pairs = make([]byte, cb*256)
	}
	qc.pairs = qc.pairs[:cb*256]
	for p := range cb {
		lo, hi, out := qc.luts[p*64:p*64+16], qc.luts[p*64+32:p*64+48], qc.pairs[p*256:p*256+256]
		for x := range out {
			out[x] = lo[x&15] + hi[x>>4]
		}
	}
}

// scanBlocks writes into out (nb*blockSize entries) the sum 2W-15pc (queryCode.signs) of each
// code of the nb blocks of words-word codes in blocks, for the query qc.
func scanBlocks(blocks []byte, nb, words int, qc *queryCode, out []int32) {
	cb := words * 8
	if nb == 0 {
		return
	}
	_ = blocks[nb*blockBytes(words)-1]
	_ = out[nb*blockSize-1]
	if cb <= scanRun {
		scanRunBlocks(blocks, nb, cb, 0, cb, qc, out)
		return
	}
	// Longer codes (more than 2,048 dimensions) are summed a run of bytes at a time.
	var part [blockSize]int32
	for b := range nb {
		o := out[b*blockSize : (b+1)*blockSize]
		clear(o)
		blk := blocks[b*blockBytes(words) : (b+1)*blockBytes(words)]
		for from := 0; from < cb; from += scanRun {
			to := min(cb, from+scanRun)
			scanRunBlocks(blk, 1, cb, from, to, qc, part[:])
			for i, x := range part {
				o[i] += x
			}
		}
	}
}

// scanBlocksGeneric is the portable kernel: for each of nb blocks of cb-byte codes, the sum of
// the pair tables over the bytes from to to-1 of each code, less their bias, into out.
func scanBlocksGeneric(blocks []byte, nb, cb, from, to int, pairs []byte, out []int32) {
	var acc [blockSize]int32
	bb := blockBytes(cb / 8)
	for b := range nb {
		clear(acc[:])
		blk := blocks[b*bb:]
		for p := from; p < to; p++ {
			row, tab := blk[p*blockSize:p*blockSize+blockSize], pairs[p*256:p*256+256]
			for i, x := range row {
				acc[i] += int32(tab[x])
			}
		}
		o := out[b*blockSize : (b+1)*blockSize]
		bias := int32(2 * lutBias * (to - from))
		for m := range blockSize / 2 {
			o[m], o[blockSize/2+m] = acc[2*m]-bias, acc[2*m+1]-bias
		}
	}
}
