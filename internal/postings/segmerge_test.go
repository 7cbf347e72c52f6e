package postings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/framing"
)

// TestMergeSegmentsEqualsSingle merges segments of consecutive key ranges, and merges of
// merges, as a budgeted build does, and checks the result against one segment built from all
// the passages: the same tables and the same hits and scores for every query.
func TestMergeSegmentsEqualsSingle(t *testing.T) {
	// release the inputs' pages after every few terms: a merge reads them back unchanged
	defer func(n uint64) { releaseEvery = n }(releaseEvery)
	releaseEvery = 64
	const vocab = 3000
	c := newZipfCorpus(5, 5000, vocab)
	sc := c.scoring()
	single := c.build(t, tempPath(t, "all.kpst"), BuilderOptions{}, nil)
	one, err := NewSearcher([]*Segment{single}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const shards = 7
	var parts []*Segment
	for s := 0; s < shards; s++ {
		lo, hi := s*len(c.keys)/shards, (s+1)*len(c.keys)/shards
		if s == 3 {
			hi = lo // an empty segment merges as nothing
		}
		parts = append(parts, c.build(t, tempPath(t, fmt.Sprintf("p%d.kpst", s)), BuilderOptions{MaxBufferedPostings: 2000},
			func(i int) bool { return i >= lo && i < hi }))
	}
	// the shard left empty holds no passage: give its range to the next one
	lo, hi := 3*len(c.keys)/shards, 5*len(c.keys)/shards
	parts[4] = c.build(t, tempPath(t, "p4b.kpst"), BuilderOptions{}, func(i int) bool { return i >= lo && i < hi })
	merge := func(name string, segs []*Segment) *Segment {
		path := tempPath(t, name)
		st, err := MergeSegments(context.Background(), path, segs, BuilderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if st.Docs != s.Len() || st.Terms != s.Terms() {
			t.Fatalf("stats %+v, segment of %d passages and %d terms", st, s.Len(), s.Terms())
		}
		return s
	}
	left := merge("left.kpst", parts[:3])
	right := merge("right.kpst", parts[3:])
	all := merge("merged.kpst", []*Segment{left, right})

	if all.Len() != single.Len() || all.Terms() != single.Terms() || all.Tokens() != single.Tokens() || all.tr.blocks != single.tr.blocks {
		t.Fatalf("merged: %d passages, %d terms, %d tokens, %d blocks; single: %d, %d, %d, %d",
			all.Len(), all.Terms(), all.Tokens(), all.tr.blocks, single.Len(), single.Terms(), single.Tokens(), single.tr.blocks)
	}
	if !reflect.DeepEqual(all.keys, single.keys) || !reflect.DeepEqual(all.lens, single.lens) || !reflect.DeepEqual(all.strs, single.strs) {
		t.Fatal("merged keys, lengths or term strings differ from the single segment's")
	}
	for i := 0; i < single.Terms(); i++ {
		a, _, err := all.entry(i)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := single.entry(i)
		if a.df != b.df || a.frontN != b.frontN {
			t.Fatalf("term %q: merged df %d frontier %d, single %d %d", single.termAt(i), a.df, a.frontN, b.df, b.frontN)
		}
		for j := uint64(0); j < a.frontN; j++ {
			at, al := all.frontierPair(a, j)
			bt, bl := single.frontierPair(b, j)
			if at != bt || al != bl {
				t.Fatalf("term %q: frontier pair %d merged (%d, %d), single (%d, %d)", single.termAt(i), j, at, al, bt, bl)
			}
		}
	}
	if _, err := MergeSegments(context.Background(), tempPath(t, "bad.kpst"), []*Segment{right, left}, BuilderOptions{}); err == nil {
		t.Fatal("merging segments out of key order: no error")
	}
	merged, err := NewSearcher([]*Segment{all}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for qi, terms := range c.queries(9, 300, 8, vocab) {
		q := Query{Terms: terms, K: 10}
		want, err := one.Search(context.Background(), q, sc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := merged.Search(context.Background(), q, sc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d %q:\nmerged %v\nsingle %v", qi, terms, got, want)
		}
	}
}

// TestMergeWorkersWriteTheSameSegment merges the same segments (a merge of merges among them,
// as a build's final merge reads) with one to five ranges of terms at once: each file must be
// byte for byte the one a single range writes, and the ranges must have been cut.
func TestMergeWorkersWriteTheSameSegment(t *testing.T) {
	defer func(n uint64) { minRangeTerms = n }(minRangeTerms)
	minRangeTerms = 16
	c := newZipfCorpus(11, 4000, 4000)
	const shards = 6
	var parts []*Segment
	for s := 0; s < shards; s++ {
		lo, hi := s*len(c.keys)/shards, (s+1)*len(c.keys)/shards
		parts = append(parts, c.build(t, tempPath(t, fmt.Sprintf("p%d.kpst", s)), BuilderOptions{MaxBufferedPostings: 3000},
			func(i int) bool { return i >= lo && i < hi }))
	}
	merge := func(name string, segs []*Segment, workers int) (string, *BuildStats) {
		path := tempPath(t, name)
		st, err := MergeSegments(context.Background(), path, segs, BuilderOptions{MergeWorkers: workers})
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		return path, st
	}
	prePath, _ := merge("pre.kpst", parts[:3], 2)
	pre, err := Open(prePath, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pre.Close()
	inputs := append([]*Segment{pre}, parts[3:]...)
	onePath, one := merge("w1.kpst", inputs, 1)
	want, err := os.ReadFile(onePath)
	if err != nil {
		t.Fatal(err)
	}
	if one.Ranges != 1 {
		t.Fatalf("one worker: %d ranges", one.Ranges)
	}
	if one.Bytes != int64(len(want)) || one.SHA256 != sha256.Sum256(want) {
		t.Fatalf("merge stats say %d bytes, sha256 %x; the file has %d, %x", one.Bytes, one.SHA256, len(want), sha256.Sum256(want))
	}
	for workers := 2; workers <= 5; workers++ {
		path, st := merge(fmt.Sprintf("w%d.kpst", workers), inputs, workers)
		if st.Ranges != workers {
			t.Fatalf("%d workers: %d ranges, want as many", workers, st.Ranges)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d workers: a segment of %d bytes that differs from one worker's (%d bytes)", workers, len(got), len(want))
		}
		if st.Terms != one.Terms || st.Postings != one.Postings || st.Docs != one.Docs || st.SHA256 != one.SHA256 {
			t.Fatalf("%d workers: stats %+v, one worker's %+v", workers, st, one)
		}
	}

	// The same passages in version 2 segments (uvarint blocks), the first three merged into one
	// as version 2 too: merged now, they are re-encoded into the very same file.
	var old []*Segment
	for s := 0; s < shards; s++ {
		lo, hi := s*len(c.keys)/shards, (s+1)*len(c.keys)/shards
		old = append(old, c.build(t, tempPath(t, fmt.Sprintf("v%d.kpst", s)), BuilderOptions{MaxBufferedPostings: 3000, varintBlocks: true},
			func(i int) bool { return i >= lo && i < hi }))
	}
	oldPre := tempPath(t, "v-pre.kpst")
	if _, err := MergeSegments(context.Background(), oldPre, old[:3], BuilderOptions{MergeWorkers: 2, varintBlocks: true}); err != nil {
		t.Fatal(err)
	}
	if pre, err = Open(oldPre, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	defer pre.Close()
	if pre.packed != nil || old[3].packed != nil {
		t.Fatal("the version 2 inputs opened as packed segments")
	}
	for _, workers := range []int{1, 3} {
		path, _ := merge(fmt.Sprintf("from-v2-w%d.kpst", workers), append([]*Segment{pre}, old[3:]...), workers)
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d workers: the version 2 inputs merged into %d bytes (%v) that differ from the packed inputs' %d", workers, len(got), err, len(want))
		}
	}
}

// TestMergeRefusesUnorderedDictionary: a merge input whose dictionary is not in strict byte
// order (two entries swapped, or one repeated, in a segment read without its checksum, as a
// build reads its own parts) fails the merge with an error naming the order, instead of
// writing a segment whose terms a search could not find.
func TestMergeRefusesUnorderedDictionary(t *testing.T) {
	defer func(n uint64) { minRangeTerms = n }(minRangeTerms)
	minRangeTerms = 16
	c := newZipfCorpus(3, 400, 200)
	half := len(c.keys) / 2
	left := c.build(t, tempPath(t, "left.kpst"), BuilderOptions{}, func(i int) bool { return i < half })
	right := c.build(t, tempPath(t, "right.kpst"), BuilderOptions{}, func(i int) bool { return i >= half })
	data, err := os.ReadFile(right.Path())
	if err != nil {
		t.Fatal(err)
	}
	at := framing.HeaderSize + int(right.tr.dictOff) + 5*dictEntrySize
	entry5, entry6 := slices.Clone(data[at:at+dictEntrySize]), slices.Clone(data[at+dictEntrySize:at+2*dictEntrySize])
	for _, tc := range []struct {
		name           string
		entry5, entry6 []byte
	}{
		{"swapped", entry6, entry5},
		{"repeated", entry5, entry5},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				bad := slices.Clone(data)
				copy(bad[at:], tc.entry5)
				copy(bad[at+dictEntrySize:], tc.entry6)
				path := tempPath(t, "bad.kpst")
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				s, err := Open(path, OpenOptions{SkipChecksum: true})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_, err = MergeSegments(context.Background(), tempPath(t, "merged.kpst"), []*Segment{left, s}, BuilderOptions{MergeWorkers: workers})
				if err == nil || !strings.Contains(err.Error(), "out of byte order") {
					t.Fatalf("merging a dictionary out of order: %v, want an error naming the order", err)
				}
			})
		}
	}
}
