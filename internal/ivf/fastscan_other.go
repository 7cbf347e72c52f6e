//go:build !amd64 || purego

package ivf

// portableScan reports whether scanRunBlocks runs the portable kernel: always here.
func portableScan() bool { return true }

// scanRunBlocks is scanBlocksGeneric.
func scanRunBlocks(blocks []byte, nb, cb, from, to int, qc *queryCode, out []int32) {
	scanBlocksGeneric(blocks, nb, cb, from, to, qc.pairs, out)
}
