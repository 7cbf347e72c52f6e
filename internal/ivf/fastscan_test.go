package ivf

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// popcountsGeneric is the definition scanBlocks is held to: for each of the n codes of words
// words in codes, 2W - 15pc, pc its popcount and W the sum over the query planes j of 2^j
// times the popcount of the code and plane j.
func popcountsGeneric(codes []uint64, n, words int, planes []uint64, out []int32) {
	p0, p1, p2, p3 := planes[:words], planes[words:2*words], planes[2*words:3*words], planes[3*words:4*words]
	for e := range n {
		b := codes[e*words : (e+1)*words]
		var pc, w0, w1, w2, w3 int
		for i, x := range b {
			pc += bits.OnesCount64(x)
			w0 += bits.OnesCount64(x & p0[i])
			w1 += bits.OnesCount64(x & p1[i])
			w2 += bits.OnesCount64(x & p2[i])
			w3 += bits.OnesCount64(x & p3[i])
		}
		out[e] = int32(2*(w0+2*w1+4*w2+8*w3) - queryLevels*pc)
	}
}

// dotSigns returns sum sign(r_i) q_i for the one code b, through the blocks a search scans.
func (qc *queryCode) dotSigns(b []uint64) float32 {
	blocks := make([]byte, blockBytes(qc.words))
	packBlocks(blocks, b, 1, qc.words)
	var t [blockSize]int32
	scanBlocks(blocks, 1, qc.words, qc, t[:])
	return qc.signs(t[0])
}

// randomScan returns n random codes of words words, packed in blocks, and a random query
// prepared for them.
func randomScan(rng *rand.Rand, n, words int) ([]uint64, []byte, *queryCode) {
	codes := make([]uint64, n*words)
	for i := range codes {
		codes[i] = rng.Uint64()
	}
	pq := make([]float32, words*64)
	for i := range pq {
		pq[i] = float32(rng.NormFloat64())
	}
	qc := new(queryCode)
	qc.prepare(pq, words)
	blocks := make([]byte, blocksOf(n)*blockBytes(words))
	packBlocks(blocks, codes, n, words)
	return codes, blocks, qc
}

// TestScanBlocks holds the scan of packed codes, in assembly and portable, to the popcount
// definition, at every code length up to one past a run of the kernel (4,096 dimensions) and
// at list lengths around a block; and unpacking to packing.
func TestScanBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for _, words := range []int{1, 2, 4, 8, 16, 32, 64} {
		for _, n := range []int{1, 16, 31, 32, 33, 70} {
			t.Run(fmt.Sprintf("%d words %d codes", words, n), func(t *testing.T) {
				codes, blocks, qc := randomScan(rng, n, words)
				nb := blocksOf(n)
				if got := unpackBlocks(nil, blocks, n, words); !slices.Equal(got, codes) {
					t.Fatalf("unpacked codes differ from those packed")
				}
				want := make([]int32, n)
				popcountsGeneric(codes, n, words, qc.planes, want)
				got, portable := make([]int32, nb*blockSize), make([]int32, nb*blockSize)
				scanBlocks(blocks, nb, words, qc, got)
				qc.preparePairs()
				cb := words * 8
				for from := 0; from < cb; from += scanRun {
					part := make([]int32, nb*blockSize)
					scanBlocksGeneric(blocks, nb, cb, from, min(cb, from+scanRun), qc.pairs, part)
					for i, x := range part {
						portable[i] += x
					}
				}
				if !slices.Equal(got[:n], want) || !slices.Equal(portable[:n], want) {
					t.Fatalf("scan %v\nportable %v\nwant %v", got[:n], portable[:n], want)
				}
				for _, x := range got[n:] { // zero codes pad the last block
					if x != 0 {
						t.Fatalf("padding scanned as %d, want 0", x)
					}
				}
			})
		}
	}
}
