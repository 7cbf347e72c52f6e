//go:build amd64 && !purego

package ivf

import "golang.org/x/sys/cpu"

// usePopcnt512 is fixed at start-up from CPUID: the assembly counts bits of four code words at
// once with AVX-512's VPOPCNTQ on 256-bit registers.
var usePopcnt512 = cpu.X86.HasAVX512VPOPCNTDQ && cpu.X86.HasAVX512VL && cpu.X86.HasAVX2

// popcountsAVX512 is in popcount_amd64.s: popcountsGeneric for words a multiple of 4.
//
//go:noescape
func popcountsAVX512(codes *uint64, n, words int, planes *uint64, out *int32)

// popcounts is popcountsGeneric, in assembly where the CPU can.
func popcounts(codes []uint64, n, words int, planes []uint64, out []int32) {
	if n == 0 {
		return
	}
	if usePopcnt512 && words%4 == 0 {
		_ = codes[n*words-1] // the assembly does no bounds checks
		_ = planes[4*words-1]
		_ = out[n-1]
		popcountsAVX512(&codes[0], n, words, &planes[0], &out[0])
		return
	}
	popcountsGeneric(codes, n, words, planes, out)
}
