package annbench

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestGenerate(t *testing.T) {
	a := Generate(500, 50, 24, 3)
	b := Generate(500, 50, 24, 3)
	c := Generate(500, 50, 24, 4)
	if len(a.Base) != 500 || len(a.Queries) != 50 || a.Dim != 24 {
		t.Fatalf("sizes %d/%d/%d", len(a.Base), len(a.Queries), a.Dim)
	}
	same := func(x, y []float32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a.Base[7], b.Base[7]) || !same(a.Queries[3], b.Queries[3]) {
		t.Error("same seed, different data")
	}
	if same(a.Base[7], c.Base[7]) {
		t.Error("different seeds, same data")
	}
	for _, v := range append(a.Base, a.Queries...) {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Fatalf("vector norm^2 %v, want 1", ss)
		}
	}
	for _, q := range a.Queries {
		for _, v := range a.Base {
			if same(q, v) {
				t.Fatal("a query is a base vector")
			}
		}
	}
	// Clustered: a point's best match among the others is far closer than a random pair.
	var nn, random float64
	for i := range 50 {
		best := -1.0
		for j, v := range a.Base {
			if j != i {
				best = max(best, dot64(a.Base[i], v))
			}
		}
		nn += best
		random += dot64(a.Base[i], a.Base[i+250])
	}
	if nn/50 < 0.5 || random/50 > 0.2 {
		t.Errorf("mean nearest-neighbour cosine %.2f, mean random-pair cosine %.2f: not clustered", nn/50, random/50)
	}
}

func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestDumpRoundTrip(t *testing.T) {
	ds := Generate(100, 5, 8, 1)
	gt := make([][]uint64, 5)
	for i := range gt {
		gt[i] = []uint64{9, 8, 7, 6, 5, 4, 3, 2, 1, uint64(i)}
	}
	dir := t.TempDir()
	if err := Dump(dir, ds, gt, Config{Efs: []int{16}, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	base, _ := os.ReadFile(filepath.Join(dir, "base.f32"))
	if len(base) != 100*8*4 || math.Float32frombits(binary.LittleEndian.Uint32(base[4*(8*3+2):])) != ds.Base[3][2] {
		t.Error("base.f32 does not hold the base vectors row-major little-endian")
	}
	g, _ := os.ReadFile(filepath.Join(dir, "gt.i32"))
	if len(g) != 5*10*4 || binary.LittleEndian.Uint32(g[4*(10*4+9):]) != 4 {
		t.Error("gt.i32 does not hold the ground truth")
	}
	if err := Dump(dir, ds, [][]uint64{{1}}, Config{}); err == nil {
		t.Error("short ground truth row accepted")
	}
}

// TestDumpStreams: writing the base set allocates a buffer, not the set's bytes (at 10M x 256
// those were 10 GB more than the run already held).
func TestDumpStreams(t *testing.T) {
	ds := Generate(40000, 1, 64, 1) // 10 MB of base vectors
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := Dump(dir, ds, [][]uint64{make([]uint64, K)}, Config{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("Dump of %d bytes of vectors allocated %d bytes", 40000*64*4, got)
	}
	if st, err := os.Stat(filepath.Join(dir, "base.f32")); err != nil || st.Size() != 40000*64*4 {
		t.Errorf("base.f32: %v, %v", st, err)
	}
}

// TestRunMeasuresEveryRepresentation: one run measures the graph as built (float32), mapped on
// int8 codes and mapped on binary codes, with recall against exact search in each, and saves
// both files when asked.
func TestRunMeasuresEveryRepresentation(t *testing.T) {
	save := filepath.Join(t.TempDir(), "g.hnsw")
	rows, err := Run(context.Background(), Config{N: 3000, Dim: 128, Queries: 50, Efs: []int{64}, Seed: 2,
		Mapped: true, Binary: true, Save: save}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"": 0.95, "mapped": 0.93, "mapped-binary": 0.8}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, r := range rows {
		if min, ok := want[r.Mode]; !ok || r.Recall < min || r.QPS <= 0 {
			t.Errorf("mode %q: recall %.3f (want >= %.2f), QPS %.0f", r.Mode, r.Recall, min, r.QPS)
		}
		delete(want, r.Mode)
	}
	for _, p := range []string{save, save + ".binary"} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}
