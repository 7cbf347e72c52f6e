package hnsw

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestEncodeRange checks the per-vector codes decode to within half a step of every
// component, and that a constant vector (no range) decodes exactly.
func TestEncodeRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"random", func() []float32 {
			v := make([]float32, 300)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			return v
		}()},
		{"constant", []float32{0.5, 0.5, 0.5}},
		{"one", []float32{-2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := make([]uint8, len(tc.v))
			lo, step := encodeRange(c, tc.v)
			for d, x := range tc.v {
				got := lo + step*float32(c[d])
				if tol := step/2 + 1e-6; math.Abs(float64(got-x)) > float64(tol) {
					t.Errorf("dim %d: %v decodes to %v, more than half a step (%v) away", d, x, got, step)
				}
			}
		})
	}
}

// TestSimCodesAgrees compares the similarity from codes with the float dot product on random
// unit vectors: the error must stay within what 8 bits a component allow.
func TestSimCodesAgrees(t *testing.T) {
	const dim, n = 256, 200
	rng := rand.New(rand.NewPCG(3, 4))
	vecs := make([][]float32, n)
	keys := make([]uint64, n)
	for i := range vecs {
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(rng.NormFloat64())
		}
		vecs[i], keys[i] = v, uint64(i)
	}
	g, err := New(dim, Options{Seed: 1, Build: BuildCodes, SpillDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	buf := make([]float32, dim)
	for i := range n {
		qi, _ := g.Vector(uint64(i))
		q := newQuery(qi)
		for j := range n {
			vj, _ := g.Vector(uint64(j))
			want := float64(dot(qi, vj))
			worst = max(worst, math.Abs(float64(g.sim(q, uint32(j)))-want))
			// Two coded nodes: one decoded, as selectNeighbors does.
			worst = max(worst, math.Abs(float64(g.sim(g.nodeQuery(buf, uint32(i)), uint32(j)))-want))
		}
	}
	if worst > 0.01 {
		t.Errorf("similarity from codes off by %.4f at worst, want <= 0.01", worst)
	}
	t.Logf("worst similarity error from codes: %.5f", worst)
}

// TestBuildCodesKeepsFloatsOnDisk builds from codes in two batches and checks that the graph
// holds no float vectors in memory, that the spill directory shows no file (it is unlinked),
// that every vector reads back exactly as the float build stores it, that exact search agrees,
// and that the saved file has the same vectors and codes sections as the float build's.
func TestBuildCodesKeepsFloatsOnDisk(t *testing.T) {
	const dim, n = 48, 1500
	rng := rand.New(rand.NewPCG(5, 6))
	vecs := make([][]float32, n)
	keys := make([]uint64, n)
	for i := range vecs {
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(rng.NormFloat64())
		}
		vecs[i], keys[i] = v, uint64(7000+i)
	}
	ctx := context.Background()
	spill := t.TempDir()
	build := func(o Options) *Graph {
		g, err := New(dim, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range [][2]int{{0, 700}, {700, n}} {
			if err := g.Add(ctx, keys[r[0]:r[1]], vecs[r[0]:r[1]]); err != nil {
				t.Fatal(err)
			}
		}
		return g
	}
	fl := build(Options{Seed: 2, Workers: 2})
	co := build(Options{Seed: 2, Workers: 2, Build: BuildCodes, SpillDir: spill})
	if co.vecs != nil || len(co.bcodes) != n*dim || len(co.brange) != 2*n {
		t.Fatalf("code build holds %d floats, %d codes, %d ranges; want 0, %d, %d", len(co.vecs), len(co.bcodes), len(co.brange), n*dim, 2*n)
	}
	if ents, _ := os.ReadDir(spill); len(ents) != 0 && co.spill.unlinked {
		t.Errorf("spill directory holds %d entries; the spill file should be unlinked", len(ents))
	}
	for _, k := range keys {
		a, okA := fl.Vector(k)
		b, okB := co.Vector(k)
		if !okA || !okB {
			t.Fatalf("key %d: present %v in float build, %v in code build", k, okA, okB)
		}
		for d := range a {
			if a[d] != b[d] {
				t.Fatalf("key %d dim %d: code build reads %v, float build holds %v", k, d, b[d], a[d])
			}
		}
	}
	for i := 0; i < n; i += 97 {
		a, _ := fl.SearchExact(vecs[i], 5)
		b, _ := co.SearchExact(vecs[i], 5)
		if len(a) != len(b) {
			t.Fatalf("exact search %d: %d and %d results", i, len(a), len(b))
		}
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("exact search %d: result %d is %v in float build, %v in code build", i, j, a[j], b[j])
			}
		}
		got, err := co.Search(vecs[i], 1, 32)
		if err != nil || len(got) != 1 || got[0].Key != keys[i] {
			t.Errorf("code build: search for vector %d returned %v, %v; want key %d", i, got, err, keys[i])
		}
	}
	dir := t.TempDir()
	pf, pc := filepath.Join(dir, "f.hnsw"), filepath.Join(dir, "c.hnsw")
	if err := fl.Save(pf); err != nil {
		t.Fatal(err)
	}
	if err := co.Save(pc); err != nil {
		t.Fatal(err)
	}
	bf, _ := os.ReadFile(pf)
	bc, _ := os.ReadFile(pc)
	if len(bf) != len(bc) { // same upper-list lengths: levels come from the seed
		t.Fatalf("file sizes %d (float build) and %d (code build)", len(bf), len(bc))
	}
	secs, _ := layoutV2(n, dim, fl.stride, uint64(len(fl.upper)), false)
	for _, i := range []int{secKeys, secLevels, secQuant, secCodes, secVectors} {
		s := secs[i]
		if string(bf[s.off:s.off+s.size]) != string(bc[s.off:s.off+s.size]) {
			t.Errorf("section %s differs between the float and the code build", sectionNames[i])
		}
	}
	if err := co.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := co.Search(vecs[0], 1, 0); err != ErrClosed {
		t.Errorf("search after Close: %v, want ErrClosed", err)
	}
}

// TestBuildCodesFromSaved extends a saved float-built graph from codes (SetBuild), loaded in
// memory and mapped: the old vectors move to the spill file and every node still finds itself.
func TestBuildCodesFromSaved(t *testing.T) {
	const dim, n = 32, 1200
	rng := rand.New(rand.NewPCG(8, 9))
	vecs := make([][]float32, n)
	keys := make([]uint64, n)
	for i := range vecs {
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(rng.NormFloat64())
		}
		vecs[i], keys[i] = v, uint64(i)
	}
	ctx := context.Background()
	g, _ := New(dim, Options{Seed: 3, Workers: 1})
	if err := g.Add(ctx, keys[:600], vecs[:600]); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.hnsw")
	if err := g.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, mapped := range []bool{false, true} {
		h, err := LoadWith(path, LoadOptions{Mapped: mapped})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.SetBuild(BuildCodes, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if err := h.Add(ctx, keys[600:], vecs[600:]); err != nil {
			t.Fatal(err)
		}
		if h.Mapped() || h.spill == nil || h.vecs != nil {
			t.Fatalf("mapped %v: after Add the graph is mapped %v, spilled %v, holds %d floats", mapped, h.Mapped(), h.spill != nil, len(h.vecs))
		}
		miss := 0
		for i, v := range vecs {
			if got, _ := h.Search(v, 1, 32); len(got) != 1 || got[0].Key != keys[i] {
				miss++
			}
		}
		if miss > n/100 {
			t.Errorf("mapped %v: %d of %d vectors do not find themselves", mapped, miss, n)
		}
		h.Close()
	}
}
