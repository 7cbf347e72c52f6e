package ivf

import (
	"math"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// padDim is the dimension of the rotated space: the next power of two of dim, at least 64 (a
// code is whole 64-bit words, and the fast Hadamard transform needs a power of two).
func padDim(dim int) int {
	p := 64
	for p < dim {
		p *= 2
	}
	return p
}

// dot returns the inner product of a and b (len(b) >= len(a)): internal/hnsw's kernel.
func dot(a, b []float32) float32 { return hnsw.DotProduct(a, b) }

// dotI8Generic is the portable inner product of the float query q with the signed byte codes
// c (len(c) >= len(q)); dotI8 dispatches to assembly where the CPU can.
func dotI8Generic(q []float32, c []byte) float32 {
	n := len(q)
	c = c[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qq, cc := q[i:i+8:i+8], c[i:i+8:i+8]
		s0 += qq[0] * float32(int8(cc[0]))
		s1 += qq[1] * float32(int8(cc[1]))
		s2 += qq[2] * float32(int8(cc[2]))
		s3 += qq[3] * float32(int8(cc[3]))
		s4 += qq[4] * float32(int8(cc[4]))
		s5 += qq[5] * float32(int8(cc[5]))
		s6 += qq[6] * float32(int8(cc[6]))
		s7 += qq[7] * float32(int8(cc[7]))
	}
	for ; i < n; i++ {
		s0 += q[i] * float32(int8(c[i]))
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotsI16Generic writes into out the inner products of q with each of the len(out)
// consecutive rows of len(q) signed bytes in c. The sums are exact when 127 times the sum of
// |q| fits an int32, as quantize16 ensures.
func dotsI16Generic(q []int16, c []byte, out []int32) {
	dim := len(q)
	for l := range out {
		row := c[l*dim : (l+1)*dim : (l+1)*dim]
		var s int32
		for i, x := range q {
			s += int32(x) * int32(int8(row[i]))
		}
		out[l] = s
	}
}

// finite reports whether every element of v is a number (neither NaN nor infinite).
func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// normalize writes v / ||v|| into dst and reports whether v had a length (a zero vector is
// copied: it has no direction, and every score against it is 0).
func normalize(dst, v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		copy(dst, v)
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	for i, x := range v {
		dst[i] = x * inv
	}
	return true
}

// quantize writes the signed byte codes of v into c (the largest magnitude becomes +-127) and
// returns the inverse norm of the codes, so that the vector's canonical form is c*inv, a unit
// vector. Quantizing a canonical form again gives the same codes and inverse norm, which is
// what makes an index rebuilt from its own vectors score exactly as before.
func quantize(c []byte, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		clear(c[:len(v)])
		return 0
	}
	s := 127 / m
	var ss int64
	for i, x := range v {
		q := int8(max(-127, min(127, math.Round(float64(x*s)))))
		c[i] = byte(q)
		ss += int64(q) * int64(q)
	}
	return float32(1 / math.Sqrt(float64(ss)))
}

// quantize16 writes v into q as words scaled to the largest magnitude that keeps any inner
// product with signed bytes, and every partial sum of one, within an int32: 32,767 for the
// largest element unless 127 times the sum of magnitudes would pass 2^31-1.
func quantize16(q []int16, v []float32) {
	var m, sum float64
	for _, x := range v {
		a := math.Abs(float64(x))
		m, sum = max(m, a), sum+a
	}
	if m == 0 {
		clear(q[:len(v)])
		return
	}
	// Rounding adds at most half a unit to each magnitude: 64*len(v) after the 127.
	s := min(32767/m, float64(math.MaxInt32-64*len(v))/(127*sum))
	for i, x := range v {
		q[i] = int16(max(-32767, min(32767, math.Round(float64(x)*s))))
	}
}

// dequantize writes the canonical form of codes c with inverse norm inv into dst.
func dequantize(dst []float32, c []byte, inv float32) {
	for i := range dst {
		dst[i] = float32(int8(c[i])) * inv
	}
}

// rotation is a random rotation of the padded space: three rounds of a random sign flip
// followed by a normalised Walsh-Hadamard transform, which spreads every vector's energy over
// all the dimensions as a random orthogonal matrix would (what RaBitQ's one-bit codes need), in
// O(d log d) instead of O(d^2).
type rotation struct {
	dpad  int
	signs []byte // 3*dpad, 1 where the sign flips
	scale float32
}

func newRotation(dpad int, signs []byte) rotation {
	return rotation{dpad: dpad, signs: signs, scale: float32(1 / math.Sqrt(float64(dpad)))}
}

// apply writes the rotation of v (len <= dpad, zero-padded) into dst (len dpad).
func (r rotation) apply(dst, v []float32) {
	copy(dst, v)
	clear(dst[len(v):r.dpad])
	for round := range 3 {
		s := r.signs[round*r.dpad : (round+1)*r.dpad]
		for i, f := range s {
			if f != 0 {
				dst[i] = -dst[i]
			}
		}
		fht(dst)
		for i := range dst {
			dst[i] *= r.scale
		}
	}
}

// fht is the unnormalised fast Walsh-Hadamard transform of x (len a power of two), in place.
func fht(x []float32) {
	n := len(x)
	for h := 1; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			a, b := x[i:i+h:i+h], x[i+h:i+2*h:i+2*h]
			for j := range a {
				u, v := a[j], b[j]
				a[j], b[j] = u+v, u-v
			}
		}
	}
}

// encodeCode writes the RaBitQ code of the rotated vector po against the list's rotated centre
// c: one bit per dimension, set where the residual r = po - c is positive, and three factors
// from which ⟨po, q⟩ is estimated for a rotated unit query q (queryBits.estimate):
//
//	scale = |r|^2 / sum|r_i|   the estimate of ⟨r, q - c⟩ is scale * sum sign(r_i) (q_i - c_i)
//	bias  = ⟨r, c⟩ - scale * sum sign(r_i) c_i
//	err   = |r| sqrt(1-f^2)/f / sqrt(d-1), f = sum|r_i| / (sqrt(d) |r|)
//
// so that the estimate of ⟨po, q⟩ = ⟨c, q⟩ + ⟨r, q - c⟩ + ⟨r, c⟩ is ⟨c, q⟩ + bias + scale *
// sum sign(r_i) q_i: the query's part does not depend on the list, and is quantized once per
// query. err times |q - c| is the standard deviation of the estimate's error (RaBitQ's theorem
// 3.2). A list segment keeps it with each code; a search does not use it (ordering the
// rescoring by the bound stopped it early in almost no query), TestEstimateBound holds it.
func encodeCode(bitsOut []uint64, po, c []float32) (scale, bias, errf float32) {
	clear(bitsOut)
	var nr2, sabs, b, sc float64
	for i, x := range po {
		r := x - c[i]
		nr2 += float64(r) * float64(r)
		sabs += math.Abs(float64(r))
		b += float64(r) * float64(c[i])
		if r > 0 {
			bitsOut[i>>6] |= 1 << (i & 63)
			sc += float64(c[i])
		} else {
			sc -= float64(c[i])
		}
	}
	if nr2 == 0 || sabs == 0 {
		return 0, float32(b), 0
	}
	d := float64(len(po))
	f := sabs / (math.Sqrt(d) * math.Sqrt(nr2))
	f = min(f, 1)
	e := math.Sqrt(nr2) * math.Sqrt(max(0, 1-f*f)) / f / math.Sqrt(d-1)
	s := nr2 / sabs
	return float32(s), float32(b - s*sc), float32(e)
}

// queryBits is the number of bits a rotated query is quantized to for the estimates: four, as
// RaBitQ does, so that a table entry over four bits of a code fits a byte (fastscan.go).
const queryBits = 4

// queryLevels is the number of quantization levels of a query's dimension.
const queryLevels = 1<<queryBits - 1

// queryCode is a rotated query quantized to queryBits bits per dimension, as bit planes, with
// a range symmetric about 0: q_i ≈ dl * (qq_i - 7.5). Symmetric, the sum over a code's bits is
// one integer per code (scanBlocks), not two.
type queryCode struct {
	dl     float32
	sumQQ  float32 // sum qq_i
	dpad   float32
	shift  float32 // 7.5 d - sumQQ (signs)
	half   float32 // sum q_i / 2 with q as quantized (refined)
	words  int
	planes []uint64 // queryBits planes of words words: bit j of qq_i in plane j
	luts   []byte   // the tables of each code byte's halves (prepareTables)
	pairs  []byte   // the portable kernel's table of each code byte (preparePairs)
}

// prepare quantizes the rotated query pq.
func (qc *queryCode) prepare(pq []float32, words int) {
	var m float32
	for _, x := range pq {
		m = max(m, float32(math.Abs(float64(x))))
	}
	qc.dpad, qc.words = float32(len(pq)), words
	qc.dl = 2 * m / queryLevels
	var inv float32
	if qc.dl > 0 {
		inv = 1 / qc.dl
	}
	if cap(qc.planes) < queryBits*words {
		qc.planes = make([]uint64, queryBits*words)
	}
	qc.planes = qc.planes[:queryBits*words]
	sum := 0
	for w := range words {
		var p0, p1, p2, p3 uint64
		for j, x := range pq[w*64 : w*64+64] {
			qq := int(x*inv + queryLevels/2.0 + 0.5)
			qq = max(0, min(queryLevels, qq))
			sum += qq
			p0 |= uint64(qq&1) << j
			p1 |= uint64(qq>>1&1) << j
			p2 |= uint64(qq>>2&1) << j
			p3 |= uint64(qq>>3&1) << j
		}
		qc.planes[w], qc.planes[words+w], qc.planes[2*words+w], qc.planes[3*words+w] = p0, p1, p2, p3
	}
	qc.sumQQ = float32(sum)
	qc.shift = queryLevels/2.0*qc.dpad - qc.sumQQ
	qc.half = qc.dl * (qc.sumQQ - queryLevels/2.0*qc.dpad) / 2
	qc.prepareTables()
}

// signs turns a code's sum t (scanBlocks: 2W - 15pc, W the sum of qq_i over the code's set bits
// and pc their number) into sum sign(r_i) q_i with q as quantized:
// 2 * sum over set bits - sum over all = dl * (2W - 15 pc - sumQQ + 7.5 d), rounded as a
// scan's estimates round it.
func (qc *queryCode) signs(t int32) float32 {
	return float32(float32(t)+qc.shift) * qc.dl
}
