package hnsw

import "math"

// dotGeneric returns the inner product of a and b (len(b) >= len(a)). It is the portable path
// (dot dispatches to assembly on amd64 with AVX2 and FMA). Eight independent accumulators
// break the floating-point dependency chain so the CPU can overlap the multiplies; the re-slicing
// lets the compiler drop bounds checks inside the loop.
func dotGeneric(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// normalizeInto writes v / ||v|| into dst. A zero vector is copied unchanged: it has no direction,
// and scores against it are 0, which is the honest answer.
func normalizeInto(dst, v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		copy(dst, v)
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i, x := range v {
		dst[i] = x * inv
	}
}

// DotProduct returns the inner product of a and b (len(b) >= len(a)), in assembly on amd64 with AVX2
// and FMA: the one float kernel the packages of vectors share (internal/ivf trains and probes
// its centroids with it).
func DotProduct(a, b []float32) float32 { return dot(a, b) }
