package hnsw

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/internal/smaps"
)

// TestLoadMappedReleasesLists: loading a graph mapped checks every level-0 list through the
// mapping, then releases those pages, so the file is not resident before the first search
// (it was: the whole level-0 section, 1.29 GB of a 10M-node graph's file). Searches still
// find every vector afterwards, faulting the lists back in.
func TestLoadMappedReleasesLists(t *testing.T) {
	const n, dim = 70000, 16 // more nodes than checkStructure releases at once (1<<16)
	keys, vecs := gaussianSet(n, dim, 5, 6)
	g, err := New(dim, Options{Seed: 1, M: 8, EfConstruction: 32, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.hnsw")
	if err := g.Save(path); err != nil {
		t.Fatal(err)
	}
	h, err := LoadWith(path, LoadOptions{Mapped: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rss, err := smaps.MappingRSS(h.mapped.data)
	if err != nil {
		t.Fatal(err)
	}
	lists := n * h.stride * 4 // 4.8 MB
	if rss > lists/8 {
		t.Errorf("%d bytes of the file resident after loading it mapped, of %d bytes of level-0 lists: want them released", rss, lists)
	}
	miss := 0
	for i, v := range vecs {
		if got, _ := h.Search(v, 1, 64); len(got) != 1 || got[0].Key != keys[i] {
			miss++
		}
	}
	if miss > n/200 {
		t.Errorf("after the release, %d of %d vectors do not find themselves", miss, n)
	}
}
