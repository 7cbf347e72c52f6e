//go:build amd64 && !purego

package postings

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKernelGroups holds the kernels to the groups they may take: every group of a full
// block with room after it up to maxKernelWidth bits, none past it, and only those whose
// loads stay inside src when it ends close after the block.
func TestKernelGroups(t *testing.T) {
	if !useUnpackAVX2 {
		t.Skip("no AVX2 on this CPU: TestUnpackKernels covers the portable code")
	}
	for width := uint(0); width <= 32; width++ {
		src := make([]byte, (BlockSize*int(width)+7)/8+64)
		want := BlockSize / 8
		if width > maxKernelWidth {
			want = 0
		}
		if g := kernelGroups(src, BlockSize, width); g != want {
			t.Errorf("width %d, 64 bytes after the block: %d groups, want %d", width, g, want)
		}
		short := src[:(BlockSize*int(width)+7)/8+packPad]
		g := kernelGroups(short, BlockSize, width)
		if width <= maxKernelWidth && g > 0 && (g-1)*int(width)+int(unpackCtls[width].hi)+16 > len(short) {
			t.Errorf("width %d, %d bytes after the block: %d groups, whose last loads pass its end", width, packPad, g)
		}
	}
}

// BenchmarkUnpackOrds times the unpacking of a full block of gaps into ordinals, by the
// kernel and by the portable code.
func BenchmarkUnpackOrds(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, width := range []uint{3, 8, 13} {
		vals := make([]uint32, BlockSize)
		for i := range vals {
			vals[i] = uint32(rng.Uint64() & (1<<width - 1))
		}
		src := append(appendPacked(nil, vals, 0, width), make([]byte, 64)...)
		var ords [BlockSize]uint32
		b.Run(fmt.Sprintf("width%d/kernel", width), func(b *testing.B) {
			for b.Loop() {
				unpackOrds(src, BlockSize, width, 5, &ords)
			}
		})
		b.Run(fmt.Sprintf("width%d/go", width), func(b *testing.B) {
			defer func(was bool) { useUnpackAVX2 = was }(useUnpackAVX2)
			useUnpackAVX2 = false
			for b.Loop() {
				unpackOrds(src, BlockSize, width, 5, &ords)
			}
		})
	}
}
