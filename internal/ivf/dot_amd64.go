//go:build amd64 && !purego

package ivf

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useDotAVX2 is fixed at start-up from CPUID: the assembly needs AVX2 and FMA.
var useDotAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotI8AVX2 is in dot_amd64.s: dotI8Generic for n a multiple of 8, in another order of
// summation.
//
//go:noescape
func dotI8AVX2(q *float32, c *byte, n int) float32

// dotsI16AVX2 is in dot_amd64.s: dotsI16Generic for dim a multiple of 16.
//
//go:noescape
func dotsI16AVX2(q *int16, c *byte, dim, count int, out *int32)

// prefetch is in dot_amd64.s: a hint, with no effect on results.
//
//go:noescape
func prefetch(p *byte, n int)

// prefetchBytes asks for b to be brought into the caches.
func prefetchBytes(b []byte) {
	if len(b) > 0 {
		prefetch(&b[0], len(b))
	}
}

// prefetchFloats asks for f to be brought into the caches.
func prefetchFloats(f []float32) {
	if len(f) > 0 {
		prefetch((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
	}
}

// dotsI16 writes into out the inner products of the word query q with each of the
// len(out) consecutive rows of len(q) signed bytes in c: the probe's score of every list.
func dotsI16(q []int16, c []byte, out []int32) {
	dim := len(q)
	if len(out) == 0 {
		return
	}
	if !useDotAVX2 || dim%16 != 0 {
		dotsI16Generic(q, c, out)
		return
	}
	_ = c[len(out)*dim-1] // the assembly does no bounds checks
	dotsI16AVX2(&q[0], &c[0], dim, len(out), &out[0])
}

// dotI8 returns the inner product of the float query q with the signed byte codes c
// (len(c) >= len(q)), in assembly where the CPU can: it scores every rescored candidate and,
// through the centroids' byte copy, every list a search considers.
func dotI8(q []float32, c []byte) float32 {
	n := len(q)
	if !useDotAVX2 || n < 8 {
		return dotI8Generic(q, c)
	}
	_ = c[n-1] // the assembly does no bounds checks
	m := n &^ 7
	s := dotI8AVX2(&q[0], &c[0], m)
	if m < n {
		s += dotI8Generic(q[m:], c[m:n])
	}
	return s
}

// nearest3x4AVX2 is in dot_amd64.s: nearest3x4 for dim a positive multiple of 8.
//
//go:noescape
func nearest3x4AVX2(q0, q1, q2, c *float32, dim, quads int, st *tileBest)

// nearest3x4 compares the three query rows with the quads*4 rows of c (dim floats each, dim a
// positive multiple of 8) and updates st, in assembly where the CPU can.
func nearest3x4(q0, q1, q2, c []float32, dim, quads int, st *tileBest) {
	if !useDotAVX2 {
		nearest3x4Generic(q0, q1, q2, c, dim, quads, st)
		return
	}
	_ = c[quads*4*dim-1] // the assembly does no bounds checks
	_, _, _ = q0[dim-1], q1[dim-1], q2[dim-1]
	nearest3x4AVX2(&q0[0], &q1[0], &q2[0], &c[0], dim, quads, st)
}
