package ivf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEstimates holds estimates (the assembly where the CPU has it) to estimatesGeneric, bit
// for bit, and estimatesGeneric to the formula, at lengths around the assembly's sixteen and
// with floors that keep none, some and all of the codes.
func TestEstimates(t *testing.T) {
	if !useEstAVX512 {
		t.Log("no AVX-512 here: estimates is estimatesGeneric")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 2441} {
		for _, floor := range []float32{float32(math.Inf(-1)), 0, 0.05, float32(math.Inf(1))} {
			t.Run(fmt.Sprintf("%d codes floor %g", n, floor), func(t *testing.T) {
				sums := make([]int32, n)
				factors := make([]float32, n*factorsPer)
				for i := range sums {
					sums[i] = int32(rng.IntN(4000)) - 2000
					factors[i*factorsPer] = float32(rng.Float64() * 0.01)
					factors[i*factorsPer+1] = float32(rng.NormFloat64() * 0.1)
					factors[i*factorsPer+2] = float32(rng.Float64())
				}
				k := &estConsts{shift: 1920 - 1813, dl: 0.0213, cq: 0.37, floor: floor}
				words := (n + 15) / 16
				want, wantMask := make([]float32, n), make([]uint16, words)
				got, gotMask := make([]float32, n), make([]uint16, words)
				for i := range gotMask {
					gotMask[i] = 0xffff // estimates clears what it does not set
				}
				estimatesGeneric(sums, factors, k, want, wantMask)
				estimates(sums, factors, k, got, gotMask)
				if !slices.Equal(got, want) || !slices.Equal(gotMask, wantMask) {
					t.Fatalf("estimates %v mask %x\nwant %v mask %x", got, gotMask, want, wantMask)
				}
				for i, x := range sums {
					f0, f1 := factors[i*factorsPer], factors[i*factorsPer+1]
					e := float64(k.cq+f1) + float64(f0)*(float64(x)+float64(k.shift))*float64(k.dl)
					if math.Abs(float64(want[i])-e) > 1e-5 {
						t.Fatalf("code %d: estimate %g, want %g", i, want[i], e)
					}
					if above := wantMask[i/16]>>(i%16)&1 == 1; above != (want[i] > floor) {
						t.Fatalf("code %d: estimate %g, floor %g, marked %v", i, want[i], floor, above)
					}
				}
			})
		}
	}
}
