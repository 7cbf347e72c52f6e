package hnsw_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// TestBinaryWalks: on the same saved binary graph, the asymmetric walk (the default) finds more
// of the exact top 10 than the Hamming walk at every ef, and an unknown walk is refused.
func TestBinaryWalks(t *testing.T) {
	f := newFixture(t, 8000, 200, 128, hnsw.Options{Seed: 1, Workers: 2, Codes: hnsw.CodesBinary})
	path := filepath.Join(t.TempDir(), "b.hnsw")
	if err := f.graph.Save(path); err != nil {
		t.Fatal(err)
	}
	recall := func(walk string, ef int) float64 {
		g, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true, BinaryWalk: walk})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		loaded := *f
		loaded.graph = g
		return loaded.recall(t, 10, ef)
	}
	for _, ef := range []int{8, 16, 24} { // at 8,000 points ef 64 finds nearly all of both
		def, asym, ham := recall("", ef), recall(hnsw.WalkAsymmetric, ef), recall(hnsw.WalkHamming, ef)
		t.Logf("ef %d: recall@10 asymmetric %.4f, Hamming %.4f", ef, asym, ham)
		if def != asym {
			t.Errorf("ef %d: the default walk's recall %.4f is not the asymmetric walk's %.4f", ef, def, asym)
		}
		if asym < ham+0.02 {
			t.Errorf("ef %d: asymmetric recall %.4f, want at least 0.02 over Hamming's %.4f", ef, asym, ham)
		}
	}
	if _, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true, BinaryWalk: "cosine"}); err == nil || !strings.Contains(err.Error(), "BinaryWalk") {
		t.Errorf("BinaryWalk cosine: err = %v", err)
	}
}
