package hnsw

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotU8MatchesReference checks the dispatching dotU8 (assembly on AVX2 machines) and the
// portable one against a float64 reference on every length 0..70 and unaligned starts.
func TestDotU8MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		for off := 0; off < 3; off++ {
			q := make([]float32, n+off)
			c := make([]uint8, n+off)
			for i := range q {
				q[i], c[i] = float32(rng.NormFloat64()), uint8(rng.IntN(256))
			}
			q, c = q[off:], c[off:]
			var want float64
			for i := range q {
				want += float64(q[i]) * float64(c[i])
			}
			for name, f := range map[string]func([]float32, []uint8) float32{"dotU8": dotU8, "dotU8Generic": dotU8Generic} {
				if got := f(q, c); math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
					t.Errorf("%s len %d offset %d = %v, want %v", name, n, off, got, want)
				}
			}
		}
	}
}

// TestQuantizerError: the code score differs from the float dot product by at most half a step
// per dimension, weighted by the query (the rounding bound), and codes span 0..255.
func TestQuantizerError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dim, n int
		scale  float64
	}{{"unit-ish 384", 384, 500, 0.05}, {"wide 16", 16, 200, 10}, {"tiny 3", 3, 5, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(tc.dim)))
			vecs := make([][]float32, tc.n)
			for i := range vecs {
				vecs[i] = make([]float32, tc.dim)
				for d := range vecs[i] {
					vecs[i][d] = float32(rng.NormFloat64() * tc.scale)
				}
			}
			vecs[0][0] = 0 // a constant dimension would have step 0; check one that is not
			z := fitQuantizer(tc.dim, tc.n, func(i int) []float32 { return vecs[i] })
			q := vecs[1]
			qs := make([]float32, tc.dim)
			c0 := z.prepare(qs, q)
			var bound float64
			for d := range q {
				bound += math.Abs(float64(q[d])) * float64(z.step[d]) / 2
			}
			code := make([]uint8, tc.dim)
			seen := [256]bool{}
			for i, v := range vecs {
				z.encode(code, v)
				for _, x := range code {
					seen[x] = true
				}
				approx := float64(c0 + dotU8(qs, code))
				exact := float64(dotGeneric(q, v))
				if math.Abs(approx-exact) > bound*1.001+1e-5 {
					t.Fatalf("vector %d: code score %v, float %v, bound %v", i, approx, exact, bound)
				}
			}
			if !seen[0] || !seen[255] {
				t.Error("codes do not reach both ends of 0..255")
			}
		})
	}
}

// BenchmarkDotU8384 compares the float-by-byte kernel with the float one at dimension 384.
func BenchmarkDotU8384(b *testing.B) {
	q := make([]float32, 384)
	c := make([]uint8, 384)
	for i := range q {
		q[i], c[i] = float32(i%7), uint8(i)
	}
	b.Run("dispatch", func(b *testing.B) {
		for b.Loop() {
			dotU8(q, c)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			dotU8Generic(q, c)
		}
	})
}
