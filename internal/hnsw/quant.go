package hnsw

import "math"

// Scalar quantisation of the stored vectors, one byte per dimension.
//
// Every dimension d has its own range [lo[d], lo[d]+255*step[d]] taken from the minimum and
// maximum of that dimension over all stored vectors, so a dimension with a narrow spread keeps
// its resolution. A vector x is stored as codes c[d] = round((x[d]-lo[d]) / step[d]) in 0..255.
// The query is never quantised: its dot product with a coded vector is
//
//	q·x ~ sum q[d]*lo[d] + sum (q[d]*step[d]) * c[d]
//
// where the first sum and the scaled query q[d]*step[d] are computed once per query, so scoring
// a node costs one float-by-byte dot product over dim bytes: a quarter of the memory traffic of
// the float32 vector. The codes only steer the graph walk; the final ranking is rescored with the
// float vectors (see searchCoded).

// quantizer holds the per-dimension ranges.
type quantizer struct {
	lo, step []float32
}

// fitQuantizer computes the per-dimension ranges of n vectors read through vec.
func fitQuantizer(dim, n int, vec func(i int) []float32) quantizer {
	z, _ := fitQuantizerEach(dim, func(fn func(int, []float32) error) error {
		for i := range n {
			if err := fn(i, vec(i)[:dim]); err != nil {
				return err
			}
		}
		return nil
	})
	return z
}

// fitQuantizerEach is fitQuantizer over vectors given in blocks of consecutive vectors
// (Graph.eachVec), so that vectors on disk are read once, in order.
func fitQuantizerEach(dim int, each func(fn func(first int, block []float32) error) error) (quantizer, error) {
	lo := make([]float32, dim)
	hi := make([]float32, dim)
	for d := range lo {
		lo[d], hi[d] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	n := 0
	err := each(func(_ int, block []float32) error {
		for o := 0; o+dim <= len(block); o += dim {
			for d, x := range block[o : o+dim] {
				lo[d] = min(lo[d], x)
				hi[d] = max(hi[d], x)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return quantizer{}, err
	}
	step := make([]float32, dim)
	for d := range lo {
		if n == 0 {
			lo[d] = 0
		}
		if w := hi[d] - lo[d]; w > 0 {
			step[d] = w / 255
		}
	}
	return quantizer{lo: lo, step: step}, nil
}

// encode writes the codes of v into dst (len dim).
func (z quantizer) encode(dst []uint8, v []float32) {
	for d, x := range v[:len(dst)] {
		if z.step[d] == 0 {
			dst[d] = 0
			continue
		}
		c := math.Round(float64((x - z.lo[d]) / z.step[d]))
		dst[d] = uint8(min(max(c, 0), 255))
	}
}

// prepare writes the scaled query into qs and returns the constant term of the approximation.
func (z quantizer) prepare(qs, q []float32) float32 {
	var c float64
	for d, x := range q {
		qs[d] = x * z.step[d]
		c += float64(x) * float64(z.lo[d])
	}
	return float32(c)
}

// dotU8Generic is the portable float-by-byte inner product (dotU8 dispatches to assembly on
// amd64 with AVX2); len(c) must be at least len(q).
func dotU8Generic(q []float32, c []uint8) float32 {
	n := len(q)
	c = c[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qq := q[i : i+8 : i+8]
		cc := c[i : i+8 : i+8]
		s0 += qq[0] * float32(cc[0])
		s1 += qq[1] * float32(cc[1])
		s2 += qq[2] * float32(cc[2])
		s3 += qq[3] * float32(cc[3])
		s4 += qq[4] * float32(cc[4])
		s5 += qq[5] * float32(cc[5])
		s6 += qq[6] * float32(cc[6])
		s7 += qq[7] * float32(cc[7])
	}
	for ; i < n; i++ {
		s0 += q[i] * float32(c[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
