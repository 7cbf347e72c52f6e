package ivf

import (
	"math"
	"math/bits"
)

// Refinement codes. A one-bit code places the residual r = po - c on the grid sign(r_i) * 1/2;
// its estimate's error is about |r| sqrt(1-f^2)/f / sqrt(d) with f about 0.8, so a search must
// rescore hundreds of candidates with their int8 vectors to find the exact top 10 among them.
// A second bit a dimension (extended RaBitQ, Gao et al. 2025, with two bits) places r on the
// grid sign(r_i) * {1/2, 3/2}, with f about 0.94: half the error. The one-bit code's bit is the
// sign; the refinement code keeps the other, set where |r_i| is among the largest, and two
// factors. A search estimates its candidates again from both codes and rescores only the best
// of those: on 40M topic-fixture vectors at probe 64, rescoring the 192 best of 2,440 refined
// estimates found 0.9854 of the exact top 10, where the one-bit estimates found 0.9862 with
// all 2,440 rescored and 0.9822 with 1,024. That is a few hundred reads of int8 vectors a query
// instead of thousands, which is what serving an index larger than memory pays for.

// refineWords is the size in uint64s of a refinement code of a one-bit code of words words:
// its bits, then its scale and bias as float32s in one word (low half the scale), so that a
// search reads one record (40 bytes at 256 dimensions) a candidate.
func refineWords(words int) int { return words + 1 }

// refineFactors returns the scale and bias of the refinement code rec.
func refineFactors(rec []uint64) (scale, bias float32) {
	x := rec[len(rec)-1]
	return math.Float32frombits(uint32(x)), math.Float32frombits(uint32(x >> 32))
}

// encodeRefine writes into rec (refineWords long) the refinement code of the rotated vector po
// against the list's rotated centre c: its bits and the factors from which ⟨po, q⟩ is
// estimated:
//
//	x_i   = sign(r_i) (1/2 + e_i)       the grid point, e_i 1 for the m largest |r_i|
//	scale = |r|^2 / ⟨r, x⟩              the estimate of ⟨r, q - c⟩ is scale * ⟨x, q - c⟩
//	bias  = ⟨r, c⟩ - scale * ⟨x, c⟩
//
// m is chosen to maximise the cosine of x with r, ⟨r, x⟩ / |x| = (A/2 + P_m) / sqrt(d/4 + 2m)
// (A the sum of |r_i|, P_m that of the m largest), exactly: every m is tried on the
// magnitudes in order (sortMagnitudes). The bit kept for dimension i is not e_i but the low
// bit of x_i + 3/2 as a two-bit number, whose high bit is the one-bit code's (r_i > 0): then
//
//	⟨x, q⟩ = sum sign(r_i) q_i + sum over low bits of q_i - sum q_i / 2
//
// and a search finds the first sum in the one-bit code's estimate and the second from the
// query's bit planes, without the one-bit code itself (refined). s is scratch of len(po).
func encodeRefine(rec []uint64, po, c []float32, s *refineScratch) {
	abs, keys := s.abs, s.keys
	clear(rec)
	bitsOut := rec[:len(rec)-1]
	put := func(scale, bias float32) {
		rec[len(rec)-1] = uint64(math.Float32bits(scale)) | uint64(math.Float32bits(bias))<<32
	}
	var nr2, sabs, rc float64
	for i, x := range po {
		r := x - c[i]
		nr2 += float64(r) * float64(r)
		rc += float64(r) * float64(c[i])
		abs[i] = float32(math.Abs(float64(r)))
		keys[i] = math.Float32bits(abs[i])
		sabs += float64(abs[i])
	}
	if nr2 == 0 {
		put(0, float32(rc))
		return
	}
	d := float64(len(po))
	sortMagnitudes(keys, s.tmp)
	sorted := func(i int) float32 { return math.Float32frombits(keys[i]) }
	best, m, pm := sabs/2/math.Sqrt(d/4), 0, 0.0
	for j := 1; j <= len(keys); j++ {
		pm += float64(sorted(len(keys) - j))
		if cos := (sabs/2 + pm) / math.Sqrt(d/4+2*float64(j)); cos > best {
			best, m = cos, j
		}
	}
	// e_i for the m largest magnitudes: those above the m-th, then those equal to it in
	// order until m are set.
	thr, equal := float32(math.Inf(1)), 0
	if m > 0 {
		thr = sorted(len(keys) - m)
		equal = m
		for _, a := range abs {
			if a > thr {
				equal--
			}
		}
	}
	// Branch-free: the signs and the large dimensions fall at random, and branches on them
	// cost more than the rest of the loop. As bits, e is key > thr's key (non-negative
	// floats order as their bits), neg is r <= 0 (the bits as an int32 at most 0), and x is
	// 1/2 or 3/2 with neg's sign.
	const half, threeHalves = 0x3FE0000000000000, 0x3FF8000000000000 // float64 bits
	thrKey := uint64(math.Float32bits(thr))
	var xr, xc float64
	for i, a := range abs {
		r := po[i] - c[i]
		e := (thrKey - uint64(math.Float32bits(a))) >> 63
		if a == thr && equal > 0 {
			e, equal = 1, equal-1
		}
		neg := uint64(int64(int32(math.Float32bits(r)))-1) >> 63
		x := math.Float64frombits(half + e*(threeHalves-half) | neg<<63)
		bitsOut[i>>6] |= (e ^ neg) << (i & 63) // x is 3/2 or -1/2: the low bit of x + 3/2
		xr += x * float64(r)
		xc += x * float64(c[i])
	}
	scale := nr2 / xr
	put(float32(scale), float32(rc-scale*xc))
}

// refineScratch is the working memory of encodeRefine for vectors of one length.
type refineScratch struct {
	abs       []float32 // |r_i|
	keys, tmp []uint32  // the bits of abs, sorted; sortMagnitudes's scratch
}

func newRefineScratch(d int) refineScratch {
	return refineScratch{abs: make([]float32, d), keys: make([]uint32, d), tmp: make([]uint32, d)}
}

// sortMagnitudes sorts keys, the bits of non-negative float32s (whose order as integers is
// that of the numbers), in ascending order, with tmp of the same length as scratch. It is a
// radix sort of a byte a pass, which skips the passes where every key has the same byte: at
// 256 dimensions, once a vector in a build, a comparison sort took two thirds of
// encodeRefine's time (BenchmarkEncodeRefine). The result is the same as slices.Sort's of the
// numbers.
func sortMagnitudes(keys, tmp []uint32) {
	if len(keys) == 0 {
		return
	}
	var counts [4][256]uint32
	for _, k := range keys {
		counts[0][k&0xff]++
		counts[1][k>>8&0xff]++
		counts[2][k>>16&0xff]++
		counts[3][k>>24]++
	}
	src, dst := keys, tmp[:len(keys)]
	for p := range counts {
		c, shift := &counts[p], 8*p
		if c[src[0]>>shift&0xff] == uint32(len(keys)) {
			continue // every key has this byte
		}
		var at uint32
		for b, n := range c {
			c[b], at = at, at+n
		}
		for _, k := range src {
			b := k >> shift & 0xff
			dst[c[b]] = k
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// refined is the estimate of ⟨po, q⟩ from a candidate's refinement code rec, with signs its
// one-bit code's sum sign(r_i) q_i (queryCode.signs) and cq the list's centre with the query.
// With q as quantized, q_i = dl (qq_i - 7.5), the sum of q_i over the low bits is dl times the
// sum of qq_i over them (from the query's bit planes) less 7.5 a bit.
func (qc *queryCode) refined(signs float32, rec []uint64, cq float32) float32 {
	w := qc.words
	var sum, n int
	for j, x := range rec[:w] {
		n += bits.OnesCount64(x)
		for b := range queryBits {
			sum += bits.OnesCount64(x&qc.planes[b*w+j]) << b
		}
	}
	lows := qc.dl * (float32(sum) - queryLevels/2.0*float32(n))
	scale, bias := refineFactors(rec)
	return cq + bias + scale*(signs+lows-qc.half)
}
