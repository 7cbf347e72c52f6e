//go:build amd64 && !purego

package postings

import (
	"math"

	"golang.org/x/sys/cpu"
)

// useUnpackAVX2 is fixed at start-up from CPUID.
var useUnpackAVX2 = cpu.X86.HasAVX2

// unpackCtl is what the AVX2 kernels need to unpack groups of eight values of one width:
// the eight values of a group take exactly width bytes, the first four from its first byte
// on, the last four from byte hi on (4*width/8), each lane of 16 bytes loaded on its own.
// shuf gives each value's 32-bit lane the four bytes from the one its first bit is in,
// shift moves that bit to bit 0, mask keeps width bits. The layout is the kernels'.
type unpackCtl struct {
	shuf  [32]byte
	shift [8]uint32
	mask  uint32
	_     uint32
	hi    int64
	step  int64
}

// maxKernelWidth is the widest value the kernels unpack: a value and its first bit's
// position in its byte (up to 7) fit the 32 bits of a lane.
const maxKernelWidth = 25

// unpackCtls holds the control of each width the kernels unpack; it is never written after
// start-up.
var unpackCtls = newUnpackCtls()

func newUnpackCtls() *[maxKernelWidth + 1]unpackCtl {
	var t [maxKernelWidth + 1]unpackCtl
	for w := range t {
		c := &t[w]
		c.hi, c.step = int64(4*w/8), int64(w)
		c.mask = uint32(uint64(1)<<w - 1)
		for i := range 8 {
			bit := i * w
			lane := i / 4
			base := 0
			if lane == 1 {
				base = int(c.hi)
			}
			first := bit/8 - base
			for b := range 4 {
				c.shuf[i*4+b] = byte(first + b) // within the lane: VPSHUFB indexes its own 16 bytes
			}
			c.shift[i] = uint32(bit % 8)
		}
	}
	return &t
}

// unpackOrdsAVX2 is in blockcodec_amd64.s: groups of eight gaps by ctl from src into dst as
// ordinals, each one more than the ordinal before plus its gap, the first one more than carry
// plus its gap (in 32 bits); it returns the last.
//
//go:noescape
func unpackOrdsAVX2(src *byte, groups int, ctl *unpackCtl, dst *uint32, carry uint32) uint32

// unpackAddAVX2 is in blockcodec_amd64.s: groups of eight values by ctl from src into dst,
// each plus add.
//
//go:noescape
func unpackAddAVX2(src *byte, groups int, ctl *unpackCtl, dst *uint32, add uint32)

// kernelGroups is how many of the first groups of eight of n values of width bits packed at
// src's start the kernels may unpack: each group's loads (16 bytes from its first byte and
// from its byte hi) must lie inside src.
func kernelGroups(src []byte, n int, width uint) int {
	if !useUnpackAVX2 || width > maxKernelWidth || n < 8 {
		return 0
	}
	g := n / 8
	room := len(src) - int(unpackCtls[width].hi) - 16 // the last group's first byte at most
	if room < 0 {
		return 0
	}
	if width > 0 {
		g = min(g, room/int(width)+1)
	}
	return g
}

// unpackOrdGroups unpacks the first groups groups of gaps into ordinals after carry (one
// less than the first ordinal's least value) and returns the last, or ok false where the
// kernels may not: the caller unpacks them. The ordinals are computed in 32 bits, so the
// kernel runs only where none can pass 2^32 - 1 (the caller's check of the last one then
// covers them all, as in 64 bits).
func unpackOrdGroups(src []byte, groups int, width uint, carry uint64, n int, ords *[BlockSize]uint32) (last uint64, ok bool) {
	if groups == 0 || (carry+1)+uint64(n)<<width > math.MaxUint32+1 {
		return 0, false
	}
	return uint64(unpackOrdsAVX2(&src[0], groups, &unpackCtls[width], &ords[0], uint32(carry))), true
}

// unpackAddGroups unpacks the first groups groups of values plus add.
func unpackAddGroups(src []byte, groups int, width uint, add uint32, dst *[BlockSize]uint32) {
	if groups > 0 {
		unpackAddAVX2(&src[0], groups, &unpackCtls[width], &dst[0], add)
	}
}
