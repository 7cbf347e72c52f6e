package hnsw

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotMatchesReference checks the dispatching dot (assembly on AVX2 machines) against a float64
// reference on every length 0..70, so each loop and the tail are exercised, with unaligned starts.
func TestDotMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 70; n++ {
		for off := 0; off < 3; off++ {
			a := make([]float32, n+off)
			b := make([]float32, n+off)
			for i := range a {
				a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			a, b = a[off:], b[off:]
			var want float64
			for i := range a {
				want += float64(a[i]) * float64(b[i])
			}
			for name, f := range map[string]func(a, b []float32) float32{"dot": dot, "dotGeneric": dotGeneric} {
				if got := f(a, b); math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
					t.Errorf("%s len %d offset %d = %v, want %v", name, n, off, got, want)
				}
			}
		}
	}
}

func BenchmarkDot384(b *testing.B) {
	x := make([]float32, 384)
	y := make([]float32, 384)
	for i := range x {
		x[i], y[i] = float32(i%7), float32(i%5)
	}
	b.Run("dispatch", func(b *testing.B) {
		for b.Loop() {
			dot(x, y)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			dotGeneric(x, y)
		}
	})
}
