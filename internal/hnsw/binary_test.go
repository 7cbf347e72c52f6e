package hnsw

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestBinaryCodes checks the bits against their definition (bit d set where v[d] is above the
// mean of dimension d) and Hamming distance against a count of differing signs, on lengths that
// do and do not fill whole words.
func TestBinaryCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{1, 48, 64, 65, 256, 300} {
		vecs := make([][]float32, 50)
		for i := range vecs {
			vecs[i] = make([]float32, dim)
			for d := range vecs[i] {
				vecs[i][d] = float32(rng.NormFloat64()) + float32(d%3) // off-centre dimensions
			}
		}
		means := fitMeans(dim, len(vecs), func(i int) []float32 { return vecs[i] })
		for d := range dim {
			var s float64
			for _, v := range vecs {
				s += float64(v[d])
			}
			if got, want := means[d], float32(s/float64(len(vecs))); got != want {
				t.Fatalf("dim %d: mean[%d] = %v, want %v", dim, d, got, want)
			}
		}
		a, b := make([]uint64, words(dim)), make([]uint64, words(dim))
		binarize(a, vecs[0], means)
		for d := range dim {
			if set := a[d/64]&(1<<(d%64)) != 0; set != (vecs[0][d] > means[d]) {
				t.Fatalf("dim %d: bit %d is %v for %v against mean %v", dim, d, set, vecs[0][d], means[d])
			}
		}
		for _, v := range vecs[1:] {
			binarize(b, v, means)
			want := 0
			for d := range dim {
				if (vecs[0][d] > means[d]) != (v[d] > means[d]) {
					want++
				}
			}
			if got := hamming(a, b); got != want {
				t.Fatalf("dim %d: hamming %d, want %d", dim, got, want)
			}
		}
		// Stale bits in a reused buffer must not survive.
		for i := range b {
			b[i] = ^uint64(0)
		}
		binarize(b, vecs[0], means)
		if hamming(a, b) != 0 {
			t.Fatalf("dim %d: binarize keeps bits of the buffer's previous contents", dim)
		}
	}
}

// TestBinaryFloatRescoreSkipsCodes: with BinaryRescore float a search reads the bits, the lists
// and the float vectors only (what keeps the codes out of resident memory): it works with the
// codes taken away, and a mapped graph rescoring with int8 would not.
func TestBinaryFloatRescoreSkipsCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, dim = 500, 32
	keys := make([]uint64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i], vecs[i] = uint64(i), make([]float32, dim)
		for d := range vecs[i] {
			vecs[i][d] = float32(rng.NormFloat64())
		}
	}
	g, _ := New(dim, Options{Seed: 1, Workers: 1, Codes: CodesBinary})
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b.hnsw")
	if err := g.Save(path); err != nil {
		t.Fatal(err)
	}
	m, err := LoadWith(path, LoadOptions{Mapped: true, BinaryRescore: RescoreFloat})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.codes = nil
	found := 0
	for i := 0; i < n; i += 10 {
		res, err := m.Search(vecs[i], 5, 64)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) > 0 && res[0].Key == uint64(i) {
			found++
		}
	}
	if found < 45 {
		t.Errorf("float-rescored binary search found %d of 50 points first", found)
	}
	if _, err := LoadWith(path, LoadOptions{Mapped: true, BinaryRescore: "int4"}); err == nil {
		t.Error("BinaryRescore int4 accepted")
	}
}

// TestAsymScore checks the table walk against its definition (the sum of the query over the
// dimensions whose bit is set), on lengths that do and do not fill whole bytes and words.
func TestAsymScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dim := range []int{1, 7, 48, 64, 65, 256, 300} {
		q := make([]float32, dim)
		means := make([]float32, dim)
		for d := range q {
			q[d] = float32(rng.NormFloat64())
		}
		lut := make([]float32, words(dim)*2048)
		for i := range lut {
			lut[i] = 99 // stale contents must not survive
		}
		asymTable(lut, q)
		b := make([]uint64, words(dim))
		for range 20 {
			v := make([]float32, dim)
			for d := range v {
				v[d] = float32(rng.NormFloat64())
			}
			binarize(b, v, means)
			var want float64
			for d := range dim {
				if v[d] > 0 {
					want += float64(q[d])
				}
			}
			if got := asymScore(lut, b); math.Abs(float64(got)-want) > 1e-4 {
				t.Fatalf("dim %d: asymScore %v, want %v", dim, got, want)
			}
		}
	}
}
