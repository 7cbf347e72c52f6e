//go:build amd64 && !purego

package hnsw

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 is fixed at start-up from CPUID: the assembly needs both AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX2 is in dot_amd64.s: four 8-lane FMA accumulators over 32 floats per iteration.
//
//go:noescape
func dotAVX2(a, b *float32, n int) float32

// dot returns the inner product of a and b; len(b) must be at least len(a).
func dot(a, b []float32) float32 {
	if useAVX2 && len(a) > 0 {
		_ = b[len(a)-1] // the assembly does no bounds checks
		return dotAVX2(&a[0], &b[0], len(a))
	}
	return dotGeneric(a, b)
}

// dotU8AVX2 is in dot_amd64.s: float-by-byte inner product over a multiple of 8 elements.
//
//go:noescape
func dotU8AVX2(q *float32, c *uint8, n int) float32

// dotU8 returns the inner product of the scaled query q with the codes c (len(c) >= len(q)).
func dotU8(q []float32, c []uint8) float32 {
	n := len(q) &^ 7
	if !useAVX2 || n == 0 {
		return dotU8Generic(q, c)
	}
	_ = c[len(q)-1] // the assembly does no bounds checks
	s := dotU8AVX2(&q[0], &c[0], n)
	for i := n; i < len(q); i++ {
		s += q[i] * float32(c[i])
	}
	return s
}

// prefetch is in dot_amd64.s: PREFETCHT0 on lines consecutive cache lines from p.
//
//go:noescape
func prefetch(p unsafe.Pointer, lines int)
