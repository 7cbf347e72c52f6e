//go:build amd64 && !purego

package ivf

import "golang.org/x/sys/cpu"

// useScanAVX2 and useScanAVX512 are fixed at start-up from CPUID.
var (
	useScanAVX2   = cpu.X86.HasAVX2
	useScanAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
)

// scanRunAVX2 is in fastscan_amd64.s: scanBlocksGeneric over count bytes, with the blocks
// stride bytes apart and blocks and luts already at the first byte.
//
//go:noescape
func scanRunAVX2(blocks *byte, nb, stride, count int, luts *byte, out *int32)

// scanRunAVX512 is in fastscan_amd64.s: scanRunAVX2 over np pairs of blocks.
//
//go:noescape
func scanRunAVX512(blocks *byte, np, stride, count int, luts *byte, out *int32)

// portableScan reports whether scanRunBlocks runs the portable kernel.
func portableScan() bool { return !useScanAVX2 }

// scanRunBlocks is scanBlocksGeneric, in assembly where the CPU can. The caller checks the
// bounds (scanBlocks).
func scanRunBlocks(blocks []byte, nb, cb, from, to int, qc *queryCode, out []int32) {
	if !useScanAVX2 {
		scanBlocksGeneric(blocks, nb, cb, from, to, qc.pairs, out)
		return
	}
	_ = qc.luts[cb*64-1]
	stride, done := blockBytes(cb/8), 0
	if useScanAVX512 && nb >= 2 {
		// Pairs of blocks in the 64-byte registers, the odd one left in the 32-byte ones.
		scanRunAVX512(&blocks[from*blockSize], nb/2, stride, to-from, &qc.luts[from*64], &out[0])
		done = nb &^ 1
	}
	if done < nb {
		scanRunAVX2(&blocks[done*stride+from*blockSize], nb-done, stride, to-from, &qc.luts[from*64], &out[done*blockSize])
	}
}
