package hnsw

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A graph file whose checksums hold but whose level-l list names a node below level l is
// corrupt: a search that stepped there read that node's level-l list past the end of the
// upper lists and panicked. Read and a mapped load refuse it, naming both nodes.
func TestReadRefusesLinkBelowItsLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g, err := New(8, Options{M: 2, EfConstruction: 8, Seed: 5, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	keys := make([]uint64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = uint64(i + 1)
		vecs[i] = make([]float32, 8)
		for j := range vecs[i] {
			vecs[i][j] = rng.Float32()
		}
	}
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	// A level-1 list with a neighbour, and a node of level 0 to put in its place.
	from, low := -1, -1
	for id := range n {
		if g.levels[id] >= 1 && from < 0 && g.list(uint32(id), 1)[0] > 0 {
			from = id
		}
		if g.levels[id] == 0 && low < 0 {
			low = id
		}
	}
	if from < 0 || low < 0 {
		t.Fatalf("fixture: no level-1 list (%d) or level-0 node (%d)", from, low)
	}
	g.list(uint32(from), 1)[1] = uint32(low)
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	_, err = Read(bytes.NewReader(buf.Bytes()))
	want := "links to node"
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "whose level is 0") {
		t.Fatalf("Read: %v; want corrupt, a link below its level", err)
	}
	path := filepath.Join(t.TempDir(), "g.hnsw")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := LoadWith(path, LoadOptions{Mapped: true}); err == nil {
		m.Close()
		t.Fatal("LoadWith mapped accepted it")
	} else if !strings.Contains(err.Error(), "whose level is 0") {
		t.Fatalf("LoadWith mapped: %v", err)
	}
}
