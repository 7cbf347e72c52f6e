package postingsbm25

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// TestAdoptedPartsMergeAgain commits a build's parts unmerged at a checkpoint (six parts,
// fewer than a merge takes), and checks that the writer going on from it adopts them at the
// level their names record, so that with its own parts they make a window that merges in the
// background: a checkpoint's parts no longer wait, unmerged, for the final merge (the 40M
// build's read dozens). The last writer's Commit leaves one segment holding every passage.
func TestAdoptedPartsMergeAgain(t *testing.T) {
	ps := sciFactPassages(t)
	ctx := context.Background()
	root := t.TempDir()
	e := Engine{MaxPostings: 2000, MaxBufferedPostings: 500} // a part every 17 passages or so
	next := 0
	var base *backend.Gen
	// step writes n more passages into generation name, on from base, and commits it.
	step := func(name string, n int, final bool) []string {
		t.Helper()
		g := backend.Gen{Name: name, Dir: filepath.Join(root, name)}
		lw, err := e.Begin(ctx, g, base, backend.LexicalBegin{Analyzer: "en", Adopt: base != nil})
		if err != nil {
			t.Fatal(err)
		}
		w := lw.(*Writer)
		for end := next + n; next < end; {
			b := w.NewBatch()
			for ; next < end && b.Len() < 20; next++ {
				if err := b.Add(uint32(next+1), &ps[next]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		// Commit stops a merge still running: let them end, so the test does not hang on timing.
		w.mu.Lock()
		w.waitFinish()
		w.waitMerges()
		w.mu.Unlock()
		c, err := w.Commit(ctx, backend.CommitOptions{Checkpoint: !final})
		if err != nil {
			t.Fatal(err)
		}
		if c.Docs != next {
			t.Fatalf("%s: %d passages committed, want %d", name, c.Docs, next)
		}
		segs, err := segmentFiles(Dir(g.Dir))
		if err != nil {
			t.Fatal(err)
		}
		// the sums of the segments this writer wrote are those of the files; adopted ones
		// it did not hash are left out
		sums := c.Files
		if len(sums) == 0 {
			t.Fatalf("%s: no committed sums", name)
		}
		for _, f := range sums {
			b, err := os.ReadFile(filepath.Join(g.Dir, filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(b); int64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
				t.Fatalf("%s: %s: committed sum %d %s, the file has %d bytes, sha256 %x", name, f.Path, f.Size, f.SHA256, len(b), sum)
			}
		}
		for i, s := range segs {
			segs[i] = filepath.Base(s)
		}
		base = &g
		return segs
	}
	levels := func(segs []string) []int {
		var lv []int
		for _, s := range segs {
			lv = append(lv, levelOf(s))
		}
		return lv
	}
	first := step("g1", 105, false)
	if lv := levels(first); len(lv) < 4 || len(lv) >= mergeFactor || slices.Max(lv) != 0 {
		t.Fatalf("first checkpoint: segments %v, want a few, all of level 0", first)
	}
	second := step("g2", 200, false)
	if !slices.Contains(levels(second), 1) {
		t.Fatalf("second checkpoint: segments %v, want a merge of adopted and new parts (level 1)", second)
	}
	last := step("g3", 60, true)
	if len(last) != 1 || strings.Contains(last[0], levelMark) {
		t.Fatalf("final commit: segments %v, want one merged segment", last)
	}
	if next != 365 {
		t.Fatalf("%d passages written", next)
	}
}
