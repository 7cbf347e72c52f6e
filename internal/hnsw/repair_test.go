package hnsw

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// gaussianSet returns n vectors of dim standard normal components drawn from PCG(s1, s2),
// row by row, and their keys 0..n-1.
func gaussianSet(n, dim int, s1, s2 uint64) ([]uint64, [][]float32) {
	rng := rand.New(rand.NewPCG(s1, s2))
	keys := make([]uint64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for d := range vecs[i] {
			vecs[i][d] = float32(rng.NormFloat64())
		}
		keys[i] = uint64(i)
	}
	return keys, vecs
}

// clustered returns n unnormalised points around 200 Gaussian centres (the bench distribution).
func clustered(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0))
	cs := make([][]float32, 200)
	for i := range cs {
		cs[i] = make([]float32, dim)
		for j := range cs[i] {
			cs[i][j] = float32(rng.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := cs[rng.IntN(len(cs))]
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = c[j] + 0.8*float32(rng.NormFloat64())
		}
	}
	return out
}

func selfMisses(t *testing.T, g *Graph, vecs [][]float32, ef int) int {
	t.Helper()
	miss := 0
	for i, v := range vecs {
		r, err := g.Search(v, 1, ef)
		if err != nil {
			t.Fatal(err)
		}
		if len(r) != 1 || r[0].Key != uint64(i) {
			miss++
		}
	}
	return miss
}

// TestParallelBuildFindsEveryPoint guards the bottom-up linking in insert: before it, parallel
// builds left 3-15 of 3,000 points unfindable by their own vector before repair (0 with one worker).
func TestParallelBuildFindsEveryPoint(t *testing.T) {
	for _, dim := range []int{16, 48} {
		vecs := clustered(3000, dim, 1)
		keys := make([]uint64, len(vecs))
		for i := range keys {
			keys[i] = uint64(i)
		}
		g, _ := New(dim, Options{Seed: 1, Workers: 4})
		if err := g.Add(context.Background(), keys, vecs); err != nil {
			t.Fatal(err)
		}
		if m := selfMisses(t, g, vecs, 32); m != 0 {
			t.Errorf("dim %d: %d points do not find themselves at ef 32", dim, m)
		}
	}
}

// TestRepairReconnects cuts every level-0 link into some nodes (making them unreachable, as pruning
// occasionally does) and checks repair makes each findable again.
func TestRepairReconnects(t *testing.T) {
	vecs := clustered(2000, 32, 2)
	keys := make([]uint64, len(vecs))
	for i := range keys {
		keys[i] = uint64(i)
	}
	g, _ := New(32, Options{Seed: 2, Workers: 1})
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	victims := cutInLinks(t, g, vecs)
	s := g.getScratch(2000)
	relinked := g.repair(s)
	g.scratch.Put(s)
	if relinked < len(victims) {
		t.Errorf("repair relinked %d nodes, want at least %d", relinked, len(victims))
	}
	if m := selfMisses(t, g, vecs, 32); m != 0 {
		t.Errorf("after repair %d points still do not find themselves", m)
	}
}

// cutInLinks removes every level-0 link into every 97th node that has no upper level (making it
// unreachable, as pruning occasionally does) and returns those nodes, checking that they are
// now missed by a search for their own vector.
func cutInLinks(t *testing.T, g *Graph, vecs [][]float32) map[uint32]bool {
	t.Helper()
	n := uint32(len(g.keys))
	victims := map[uint32]bool{}
	for id := uint32(0); id < n; id += 97 {
		if g.levels[id] == 0 { // reachable only through level-0 links
			victims[id] = true
		}
	}
	for id := range n {
		lst := g.list(id, 0)
		kept := lst[1:1]
		for _, nb := range lst[1 : 1+lst[0]] {
			if !victims[nb] {
				kept = append(kept, nb)
			}
		}
		lst[0] = uint32(len(kept))
	}
	if m := selfMisses(t, g, vecs, 32); m < len(victims) {
		t.Fatalf("cutting links left only %d misses for %d victims", m, len(victims))
	}
	return victims
}

// TestSaveCheckpointDefersRepair: a checkpoint is saved without the repair pass (the graph
// stays marked for it), and a graph read back from it and marked (MarkUnrepaired, as a build
// going on from its checkpoint does) is repaired by its Save, byte for byte as the graph saved
// whole would have been, even with nothing added in between; built from floats and from codes
// (read back mapped, the pass reads the graph into memory as the build would go on: floats in
// memory, or codes with the floats spilled).
func TestSaveCheckpointDefersRepair(t *testing.T) {
	for _, build := range []string{BuildFloat, BuildCodes} {
		t.Run(build, func(t *testing.T) { saveCheckpointDefersRepair(t, build) })
	}
}

func saveCheckpointDefersRepair(t *testing.T, build string) {
	vecs := clustered(2000, 32, 2)
	keys := make([]uint64, len(vecs))
	for i := range keys {
		keys[i] = uint64(i)
	}
	spill := t.TempDir()
	g, _ := New(32, Options{Seed: 2, Workers: 2, Build: build, SpillDir: spill})
	g.DeferRepair()
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	victims := cutInLinks(t, g, vecs)
	dir := t.TempDir()
	cp := filepath.Join(dir, "checkpoint.hnsw")
	if _, _, err := g.SaveCheckpoint(cp); err != nil {
		t.Fatal(err)
	}
	if !g.unrepaired {
		t.Fatal("SaveCheckpoint cleared the graph's mark for the repair pass")
	}
	whole := filepath.Join(dir, "whole.hnsw")
	if _, _, err := g.SaveSum(whole); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	// Read back as a build resuming reads it (mapped: the pass cannot change a read-only
	// mapping, so the pass reads it into memory first), and whole.
	for _, mapped := range []bool{true, false} {
		back, err := LoadWith(cp, LoadOptions{Mapped: mapped})
		if err != nil {
			t.Fatal(err)
		}
		if m := selfMisses(t, back, vecs, 32); m < len(victims) {
			t.Fatalf("mapped %v: the checkpoint misses %d points, want the %d cut off (saved unrepaired)", mapped, m, len(victims))
		}
		if err := back.SetBuild(build, spill); err != nil { // a file does not keep Build
			t.Fatal(err)
		}
		if err := back.MarkUnrepaired(); err != nil {
			t.Fatal(err)
		}
		resumed := filepath.Join(dir, "resumed.hnsw")
		if _, _, err := back.SaveSum(resumed); err != nil {
			t.Fatal(err)
		}
		back.Close()
		got, err := os.ReadFile(resumed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("mapped %v: the checkpoint read back, marked and saved differs from the graph saved whole", mapped)
		}
		final, err := Load(resumed)
		if err != nil {
			t.Fatal(err)
		}
		if m := selfMisses(t, final, vecs, 32); m != 0 {
			t.Errorf("mapped %v: after the final save %d points still do not find themselves", mapped, m)
		}
	}
}

// TestDeferredRepair: a graph built batch by batch with the repair pass deferred finds every
// point once WriteTo (Save) has run the pass, as one repaired after each Add does; and Repair
// runs only when an Add skipped it.
func TestDeferredRepair(t *testing.T) {
	const dim, batch = 32, 150
	vecs := clustered(3000, dim, 7)
	g, _ := New(dim, Options{Seed: 3, Workers: 4})
	g.DeferRepair()
	for start := 0; start < len(vecs); start += batch {
		keys := make([]uint64, 0, batch)
		for i := start; i < start+batch; i++ {
			keys = append(keys, uint64(i))
		}
		if err := g.Add(context.Background(), keys, vecs[start:start+batch]); err != nil {
			t.Fatal(err)
		}
	}
	if !g.unrepaired {
		t.Fatal("Add ran the repair pass although it was deferred")
	}
	if _, err := g.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	if g.unrepaired {
		t.Fatal("WriteTo left the graph unrepaired")
	}
	if n, err := g.Repair(); n != 0 || err != nil {
		t.Errorf("Repair after WriteTo relinked %d nodes (%v), want 0 (nothing to repair)", n, err)
	}
	if m := selfMisses(t, g, vecs, 32); m != 0 {
		t.Errorf("%d points do not find themselves at ef 32 after the deferred repair", m)
	}
}

// TestOnRepairReports: the repair pass reports first 0 of the nodes it checks (every node with
// at most repairMaxIndeg level-0 in-links, counted here from the lists), then counts up to
// all of them, from its goroutines at once. Unclustered Gaussian vectors leave thousands of
// nodes with few in-links, as the static fixture's vectors do.
func TestOnRepairReports(t *testing.T) {
	const n, dim = 10000, 48
	keys, vecs := gaussianSet(n, dim, 7, 8)
	g, err := New(dim, Options{Seed: 2, M: 3, EfConstruction: 16, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.DeferRepair()
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	indeg := make([]int, n)
	for id := range n {
		lst := g.list(uint32(id), 0)
		for _, nb := range lst[1 : 1+lst[0]] {
			indeg[nb]++
		}
	}
	want := 0
	for _, d := range indeg {
		if d <= repairMaxIndeg {
			want++
		}
	}
	if want < 1024 {
		t.Fatalf("only %d nodes to check: the fixture should leave more than one report's worth", want)
	}
	type report struct{ checked, total int }
	var (
		mu      sync.Mutex
		reports []report
	)
	g.OnRepair(func(checked, total int) {
		mu.Lock()
		reports = append(reports, report{checked, total})
		mu.Unlock()
	})
	if _, err := g.Repair(); err != nil {
		t.Fatal(err)
	}
	if len(reports) < 2 || reports[0] != (report{0, want}) {
		t.Fatalf("reports %v: want {0 %d} first, then more", reports, want)
	}
	top := 0
	for _, r := range reports {
		if r.total != want || r.checked < 0 || r.checked > want {
			t.Errorf("report %v: want checked within 0..%d of %d", r, want, want)
		}
		top = max(top, r.checked)
	}
	if top != want || len(reports) != 2+want/1024-boolInt(want%1024 == 0) {
		t.Errorf("%d reports reaching %d: want one at the start, one every 1,024 and one at %d", len(reports), top, want)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
