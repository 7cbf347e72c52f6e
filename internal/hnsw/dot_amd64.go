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

// prefetch is in dot_amd64.s: PREFETCHT0 on lines consecutive cache lines from p.
//
//go:noescape
func prefetch(p unsafe.Pointer, lines int)
