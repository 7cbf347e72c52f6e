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

// A part adopted from a checkpoint is checksummed when it is merged: a byte flipped in a
// checkpoint's segment made the resumed build's merge write it into a segment with a new,
// valid checksum.
func TestMergeChecksAdoptedParts(t *testing.T) {
	ps := sciFactPassages(t)
	ctx := context.Background()
	root := t.TempDir()
	e := Engine{MaxPostings: 2000, MaxBufferedPostings: 500}
	write := func(g backend.Gen, base *backend.Gen, from, to int, checkpoint bool) (err error) {
		lw, err := e.Begin(ctx, g, base, backend.LexicalBegin{Analyzer: "en", Adopt: base != nil})
		if err != nil {
			return err
		}
		w := lw.(*Writer)
		defer func() {
			if err != nil {
				w.Abort()
			}
		}()
		for next := from; next < to; {
			b := w.NewBatch()
			for ; next < to && b.Len() < 20; next++ {
				if err := b.Add(uint32(next+1), &ps[next]); err != nil {
					return err
				}
			}
			if err = w.Apply(ctx, b); err != nil {
				return err
			}
		}
		w.mu.Lock()
		w.waitFinish()
		w.waitMerges()
		w.mu.Unlock()
		_, err = w.Commit(ctx, backend.CommitOptions{Checkpoint: checkpoint})
		return err
	}
	g1 := backend.Gen{Name: "g1", Dir: filepath.Join(root, "g1")}
	if err := write(g1, nil, 0, 105, true); err != nil {
		t.Fatal(err)
	}
	segs, err := segmentFiles(Dir(g1.Dir))
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	err = write(backend.Gen{Name: "g2", Dir: filepath.Join(root, "g2")}, &g1, 105, 165, false)
	if err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("final merge over a damaged adopted part: %v, want a checksum error", err)
	}
}
