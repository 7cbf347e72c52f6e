package postings

import (
	"fmt"
	"testing"
)

// TestPostingsInByteOrder: a built segment (many runs, so that terms first seen in different
// runs interleave) and a merge lay their block entries and postings out in the byte order of
// the terms, as the dictionary lists them, so that a merge reading them walks each section
// from start to end.
func TestPostingsInByteOrder(t *testing.T) {
	c := newZipfCorpus(21, 3000, 2000)
	built := c.build(t, tempPath(t, "built.kpo"), BuilderOptions{MaxBufferedPostings: 700}, nil)
	half := len(c.keys) / 2
	left := c.build(t, tempPath(t, "left.kpo"), BuilderOptions{MaxBufferedPostings: 700}, func(i int) bool { return i < half })
	right := c.build(t, tempPath(t, "right.kpo"), BuilderOptions{MaxBufferedPostings: 700}, func(i int) bool { return i >= half })
	mergedPath := tempPath(t, "merged.kpo")
	if _, err := MergeSegments(t.Context(), mergedPath, []*Segment{left, right}, BuilderOptions{}); err != nil {
		t.Fatal(err)
	}
	merged, err := Open(mergedPath, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer merged.Close()
	for _, s := range []*Segment{built, merged} {
		var next uint64 // the block the next term must start at
		var off uint64  // where its postings must start
		for i := range s.Terms() {
			ti, _, err := s.entry(i)
			if err != nil {
				t.Fatal(err)
			}
			if ti.firstBlock != next || s.blockAt(ti.firstBlock).off != off {
				t.Fatalf("%s: term %d %q starts at block %d, offset %d; the terms before it in byte order end at block %d, offset %d",
					s.Path(), i, s.termAt(i), ti.firstBlock, s.blockAt(ti.firstBlock).off, next, off)
			}
			next = ti.firstBlock + ti.nblocks
			off = s.blockEnd(next - 1)
		}
		if next != s.tr.blocks {
			t.Fatalf("%s: the terms hold %d blocks, the segment %d", s.Path(), next, s.tr.blocks)
		}
	}
}

// TestPageCount: pages are counted once per 64 KiB window read front to back, again for a
// window read after a jump, and again after a release.
func TestPageCount(t *testing.T) {
	type touch struct {
		sec    int
		lo, hi uint64
		pages  uint64
	}
	for i, steps := range [][]touch{
		{{postingsSection, 0, 10, 16}, {postingsSection, 11, 100, 0}, {postingsSection, 101, 70000, 16}, {postingsSection, 70001, 70002, 0}},
		{{blocksSection, 0, 200000, 64}, {blocksSection, 200001, 200001, 0}},
		// a jump back counts the window again: it may have been released since
		{{postingsSection, 1 << 20, 1<<20 + 5, 16}, {postingsSection, 10, 20, 16}, {postingsSection, 1 << 20, 1 << 20, 16}},
		// offsets a damaged segment gives backwards count one window
		{{postingsSection, 1 << 20, 100, 16}},
		// sections count apart
		{{dictSection, 0, 31, 16}, {stringsSection, 0, 3, 16}, {dictSection, 32, 63, 0}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var c pageCount
			for _, s := range steps {
				if got := c.touch(s.sec, s.lo, s.hi); got != s.pages {
					t.Fatalf("touch(%d, %d, %d) = %d pages, want %d", s.sec, s.lo, s.hi, got, s.pages)
				}
			}
			c = pageCount{} // a release forgets the windows
			if got := c.touch(steps[0].sec, steps[0].lo, steps[0].hi); got != steps[0].pages {
				t.Fatalf("after a release: %d pages, want %d", got, steps[0].pages)
			}
		})
	}
}
