package postings

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// packedRoundTrip packs ords and tfs after next, checks the length packedLen promises and
// unpacks them again (with only packPad bytes of slack after the block, as the last block of
// a segment has at least), returning the widths.
func packedRoundTrip(t *testing.T, ords, tfs []uint32, next uint32) (g, w uint) {
	t.Helper()
	enc := appendPackedBlock([]byte{0xee}, ords, tfs, make([]uint32, len(ords)), next)[1:]
	g, w = uint(enc[0]), uint(enc[1])
	if g > maxGapWidth || w > maxFreqWidth || packedLen(len(ords), g, w) != len(enc) {
		t.Fatalf("%d postings packed in %d bytes with widths %d and %d; packedLen says %d", len(ords), len(enc), g, w, packedLen(len(ords), g, w))
	}
	src := append(append([]byte(nil), enc[2:]...), make([]byte, packPad)...)
	var gotOrds, gotTFs [BlockSize]uint32
	last := unpackOrds(src, len(ords), g, uint64(next), &gotOrds)
	unpackFreqs(src[(len(ords)*int(g)+7)/8:], len(ords), w, &gotTFs)
	if !slices.Equal(gotOrds[:len(ords)], ords) || !slices.Equal(gotTFs[:len(tfs)], tfs) || last != uint64(ords[len(ords)-1]) {
		t.Fatalf("packed (next %d, widths %d, %d):\nords %v\ntfs  %v\nunpacked:\nords %v\ntfs  %v\nlast %d", next, g, w, ords, tfs, gotOrds[:len(ords)], gotTFs[:len(tfs)], last)
	}
	return g, w
}

func TestPackedBlock(t *testing.T) {
	seq := func(n int, from, step uint32) []uint32 {
		s := make([]uint32, n)
		for i := range s {
			s[i] = from + uint32(i)*step
		}
		return s
	}
	ones := func(n int) []uint32 { return seq(n, 1, 0) }
	// full is a full block whose gaps differ from one another, the largest 2^g - 1, and whose
	// frequencies less one differ too, the largest 2^w - 1 (at least 1, then).
	full := func(g, w uint) (ords, tfs []uint32) {
		at := uint32(0)
		for i := range uint32(BlockSize) {
			gap, f := i*2654435761>>(32-g), i*40503>>(32-w)
			if i == 77 {
				gap, f = 1<<g-1, 1<<w-1
			}
			at += gap
			ords, tfs = append(ords, at), append(tfs, 1+f)
			at++
		}
		return ords, tfs
	}
	o8, f8 := full(8, 3)
	o12, f12 := full(12, 5)
	o21, f21 := full(21, 1)
	o25, f25 := full(25, 16)
	tests := []struct {
		name       string
		ords, tfs  []uint32
		next       uint32
		wantG      uint
		wantW      uint
		wantLength int
	}{
		{"one posting at the term's start", []uint32{0}, []uint32{1}, 0, 0, 0, 2},
		{"consecutive passages, once each: widths 0, no value bytes", seq(BlockSize, 10, 1), ones(BlockSize), 10, 0, 0, 2},
		{"gaps of 1, frequency 2", seq(BlockSize, 1, 2), seq(BlockSize, 2, 0), 0, 1, 1, 2 + 16 + 16},
		{"gaps of 255 need 8 bits", seq(5, 255, 256), ones(5), 0, 8, 0, 2 + 5},
		{"a last ordinal near the top of u32", []uint32{7, math.MaxUint32 - 1}, []uint32{3, 1}, 0, 32, 2, 2 + 8 + 1},
		{"the widest frequency", []uint32{1, 2, 3}, []uint32{1 << 31, 1, 77}, 1, 0, 31, 2 + 12},
		// full blocks at widths of each of unpack's cases: eight values a load, four, two
		{"full block, 8 and 3 bits", o8, f8, 0, 8, 3, 2 + 128 + 48},
		{"full block, 12 and 5 bits", o12, f12, 0, 12, 5, 2 + 192 + 80},
		{"full block, 21 and 1 bits", o21, f21, 0, 21, 1, 2 + 336 + 16},
		{"full block, 25 and 16 bits", o25, f25, 0, 25, 16, 2 + 400 + 256},
		{"a short last block, odd bit counts", []uint32{100, 103, 110, 141, 142}, []uint32{1, 5, 2, 1, 9}, 90, 5, 4, 2 + 4 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, w := packedRoundTrip(t, tt.ords, tt.tfs, tt.next)
			if g != tt.wantG || w != tt.wantW || packedLen(len(tt.ords), g, w) != tt.wantLength {
				t.Errorf("widths %d, %d and %d bytes; want %d, %d and %d", g, w, packedLen(len(tt.ords), g, w), tt.wantG, tt.wantW, tt.wantLength)
			}
		})
	}
}

// FuzzPackedBlock packs postings drawn from the fuzzer's bytes (gaps of every size, runs of
// consecutive passages, large frequencies) and unpacks them unchanged.
func FuzzPackedBlock(f *testing.F) {
	f.Add(uint64(1), uint32(0), []byte{0, 0, 0, 1, 200, 3})
	f.Add(uint64(2), uint32(5), []byte{255, 255, 255, 255, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, seed uint64, next uint32, data []byte) {
		r := rand.New(rand.NewPCG(seed, uint64(len(data))))
		n := 1 + int(seed%BlockSize)
		ords, tfs := make([]uint32, 0, n), make([]uint32, 0, n)
		at := uint64(next)
		for i := range n {
			var b [4]byte
			copy(b[:], data[min(len(data), 4*i):])
			gap := uint64(binary.LittleEndian.Uint32(b[:])) >> (r.Uint32() % 33)
			if at += gap; at > math.MaxUint32-1 {
				break
			}
			ords = append(ords, uint32(at))
			tfs = append(tfs, 1+r.Uint32()>>(1+r.Uint32()%32))
			at++
		}
		if len(ords) > 0 {
			packedRoundTrip(t, ords, tfs, next)
		}
	})
}

// TestUnpackKernels holds the unpacking of every width, with the kernels where the CPU has
// them, to a decoding of each value on its own: full blocks and short ones, with much room
// after the block and with only packPad bytes, ordinals from 0 and from near 2^32.
func TestUnpackKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for width := uint(0); width <= 32; width++ {
		for _, n := range []int{1, 7, 8, 9, 64, 127, BlockSize} {
			for _, pad := range []int{packPad, 64} {
				for _, next := range []uint64{0, 1, 1<<32 - 1<<26} {
					vals := make([]uint32, n)
					for i := range vals {
						vals[i] = uint32(rng.Uint64() & (1<<width - 1))
					}
					src := append(appendPacked(nil, vals, 0, width), make([]byte, pad)...)
					// each value on its own, and the ordinals in 64 bits
					wantOrds := make([]uint32, n)
					ord := next - 1
					for i, v := range vals {
						ord += uint64(v) + 1
						wantOrds[i] = uint32(ord)
					}
					var ords, freqs [BlockSize]uint32
					last := unpackOrds(src, n, width, next, &ords)
					if width < 32 {
						unpackFreqs(src, n, width, &freqs)
						for i, v := range vals {
							if freqs[i] != v+1 {
								t.Fatalf("width %d, %d values, pad %d: frequency %d is %d, want %d", width, n, pad, i, freqs[i], v+1)
							}
						}
					}
					if last != ord || !slices.Equal(ords[:n], wantOrds) {
						t.Fatalf("width %d, %d values, pad %d, next %d: last %d, want %d\n got %v\nwant %v", width, n, pad, next, last, ord, ords[:n], wantOrds)
					}
				}
			}
		}
	}
}
