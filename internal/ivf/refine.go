package ivf

import (
	"math"
	"math/bits"
	"slices"
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
// (A the sum of |r_i|, P_m that of the m largest), exactly: every m is tried on the sorted
// magnitudes. The bit kept for dimension i is not e_i but the low bit of x_i + 3/2 as a
// two-bit number, whose high bit is the one-bit code's (r_i > 0): then
//
//	⟨x, q⟩ = sum sign(r_i) q_i + sum over low bits of q_i - sum q_i / 2
//
// and a search finds the first sum in the one-bit code's estimate and the second from the
// query's bit planes, without the one-bit code itself (refined). abs and sorted are scratch of
// len(po).
func encodeRefine(rec []uint64, po, c, abs, sorted []float32) {
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
		sabs += float64(abs[i])
	}
	if nr2 == 0 {
		put(0, float32(rc))
		return
	}
	d := float64(len(po))
	copy(sorted, abs)
	slices.Sort(sorted)
	best, m, pm := sabs/2/math.Sqrt(d/4), 0, 0.0
	for j := 1; j <= len(sorted); j++ {
		pm += float64(sorted[len(sorted)-j])
		if cos := (sabs/2 + pm) / math.Sqrt(d/4+2*float64(j)); cos > best {
			best, m = cos, j
		}
	}
	// e_i for the m largest magnitudes: those above the m-th, then those equal to it in
	// order until m are set.
	thr, equal := float32(math.Inf(1)), 0
	if m > 0 {
		thr = sorted[len(sorted)-m]
		equal = m
		for _, a := range abs {
			if a > thr {
				equal--
			}
		}
	}
	var xr, xc float64
	for i, a := range abs {
		r := po[i] - c[i]
		e := a > thr
		if a == thr && equal > 0 {
			e, equal = true, equal-1
		}
		x := 0.5
		if e {
			x = 1.5
		}
		if r <= 0 {
			x = -x
		}
		if e == (r > 0) { // x is 3/2 or -1/2: the low bit of x + 3/2
			bitsOut[i>>6] |= 1 << (i & 63)
		}
		xr += x * float64(r)
		xc += x * float64(c[i])
	}
	s := nr2 / xr
	put(float32(s), float32(rc-s*xc))
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
