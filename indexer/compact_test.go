package indexer

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// An inverted file without refinement codes is outdated unless its options left them out
// (--ivf-no-refine): compaction leaves one that asked for none as it is, and writes an
// outdated one again with them, though nothing was deleted, keeping every passage and vector.
func TestCompactOutdated(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	o := Options{Dir: dir, Inputs: []InputSpec{{Path: scifactHead(t, 300)}}, Encoder: &countingEncoder{dim: 32}, ivfFrom: 100,
		IVF: ivf.Options{Sample: 200, NoRefine: true}}
	sum, err := Build(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := liveIVFHead(t, dir); sum.Dense.IndexKind() != VectorIndexIVF || !sum.Dense.IVF.NoRefine || h.RefineBits != 0 {
		t.Fatalf("a build with NoRefine: dense %+v, %d refinement bits", sum.Dense, h.RefineBits)
	}
	outdated := func() string {
		g := openLive(t, dir)
		defer g.Close()
		return g.Outdated
	}
	if why := outdated(); why != "" {
		t.Fatalf("an index built without refinement codes as asked is outdated: %s", why)
	}
	c, err := compactIndex(ctx, dir, nil)
	if err != nil || c.Compacted || c.Upgraded != "" || c.Generation != sum.Generation {
		t.Fatalf("compacting it: %+v, %v; want it left as it is", c, err)
	}

	// Its manifest as a version before refinement codes wrote it: no no_refine.
	gen, err := manifest.Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	m.Dense.IVF.NoRefine = false
	if err := manifest.Write(gen, m); err != nil {
		t.Fatal(err)
	}
	why := outdated()
	if !strings.Contains(why, "refinement codes") {
		t.Fatalf("an older version's inverted file: outdated %q, want it to name the refinement codes", why)
	}
	c, err = compactIndex(ctx, dir, nil)
	if err != nil || !c.Compacted || c.Upgraded != why || c.Generation == sum.Generation {
		t.Fatalf("compacting it: %+v, %v; want a new generation, upgraded", c, err)
	}
	if h, _ := liveIVFHead(t, dir); h.RefineBits != 1 {
		t.Errorf("after compaction: %d refinement bits, want 1", h.RefineBits)
	}
	if why := outdated(); why != "" {
		t.Errorf("after compaction, still outdated: %s", why)
	}
	if c.Counts.Passages != sum.Counts.Passages || c.Dense.Vectors != sum.Dense.Vectors || c.Dense.IVF.NoRefine {
		t.Errorf("after compaction: %d passages, dense %+v; before %d, %+v", c.Counts.Passages, c.Dense, sum.Counts.Passages, sum.Dense)
	}
	if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}
