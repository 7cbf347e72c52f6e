//go:build amd64 && !purego

package ivf

import "golang.org/x/sys/cpu"

// useEstAVX512 is fixed at start-up from CPUID (which x/sys/cpu reports only where the OS
// saves the AVX-512 registers).
var useEstAVX512 = cpu.X86.HasAVX512F

// estimatesAVX512 is in estimate_amd64.s: estimatesGeneric for n a multiple of 16.
//
//go:noescape
func estimatesAVX512(t *int32, factors *float32, n int, k *estConsts, est *float32, mask *uint16)
