//go:build amd64 && !purego

package ivf

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkScanKernels times the scan of one 40M list's codes (2,441 codes of 256 bits, the
// average list at 16,384 lists) and their estimates, in cache, by each kernel the CPU has:
// the figures behind the kernels' choice in docs/benchmarks.md.
func BenchmarkScanKernels(b *testing.B) {
	const n, words = 2441, 4
	rng := rand.New(rand.NewPCG(1, 2))
	_, blocks, qc := randomScan(rng, n, words)
	nb := blocksOf(n)
	out := make([]int32, nb*blockSize)
	factors := make([]float32, n*factorsPer)
	for i := range factors {
		factors[i] = float32(rng.Float64() * 0.01)
	}
	est, mask := make([]float32, n), make([]uint16, (n+15)/16)
	k := &estConsts{shift: qc.shift, dl: qc.dl, cq: 0.3, floor: 0.33}
	run := func(name string, ok bool, f func()) {
		b.Run(name, func(b *testing.B) {
			if !ok {
				b.Skip("not on this CPU")
			}
			for b.Loop() {
				f()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/code")
		})
	}
	run("scan/avx2", useScanAVX2, func() { scanRunAVX2(&blocks[0], nb, blockBytes(words), words*8, &qc.luts[0], &out[0]) })
	run("scan/avx512", useScanAVX512, func() { scanRunBlocks(blocks, nb, words*8, 0, words*8, qc, out) })
	run("estimates/go", true, func() { estimatesGeneric(out[:n], factors, k, est, mask) })
	run("estimates/avx512", useEstAVX512, func() { estimates(out[:n], factors, k, est, mask) })
}
