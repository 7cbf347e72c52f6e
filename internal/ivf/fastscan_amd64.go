//go:build amd64 && !purego

package ivf

import "golang.org/x/sys/cpu"

// useScanAVX2 is fixed at start-up from CPUID.
var useScanAVX2 = cpu.X86.HasAVX2

// scanRunAVX2 is in fastscan_amd64.s: scanBlocksGeneric over count bytes, with the blocks
// stride bytes apart and blocks and luts already at the first byte.
//
//go:noescape
func scanRunAVX2(blocks *byte, nb, stride, count int, luts *byte, out *int32)

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
	scanRunAVX2(&blocks[from*blockSize], nb, blockBytes(cb/8), to-from, &qc.luts[from*64], &out[0])
}
