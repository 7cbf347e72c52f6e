package postings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"testing"
)

// TestFinishMergeWorkersWriteTheSameSegment builds the same passages, spilled in many runs,
// with Finish merging them in one to five ranges of terms at once: each segment must be byte
// for byte the one a single range writes, and the ranges must have been cut. The terms begin
// with many bytes, among them the empty term, a zero byte, a byte past ASCII and a first byte
// that holds most of the postings, so that some ranges are cut around it.
func TestFinishMergeWorkersWriteTheSameSegment(t *testing.T) {
	c := newZipfCorpus(17, 3000, 3000)
	docs := make([][]string, len(c.docs))
	for i, d := range c.docs {
		for j, w := range d {
			switch {
			case j%7 == 0: // most postings under "w"
				docs[i] = append(docs[i], w)
			default:
				docs[i] = append(docs[i], string(rune('a'+len(w)*j%26))+w)
			}
		}
		switch i % 50 {
		case 1:
			docs[i] = append(docs[i], "")
		case 2:
			docs[i] = append(docs[i], "\x00zero")
		case 3:
			docs[i] = append(docs[i], "\xffhigh", "éclair")
		}
	}
	build := func(workers int) ([]byte, *BuildStats) {
		path := tempPath(t, fmt.Sprintf("w%d.kpst", workers))
		b, err := NewBuilder(path, BuilderOptions{MaxBufferedPostings: 2000})
		if err != nil {
			t.Fatal(err)
		}
		b.SetMergeWorkers(workers)
		for i, k := range c.keys {
			if err := b.Add(k, docs[i]); err != nil {
				t.Fatal(err)
			}
		}
		st, err := b.Finish(context.Background())
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Bytes != int64(len(data)) || st.SHA256 != sha256.Sum256(data) {
			t.Fatalf("%d workers: stats say %d bytes, sha256 %x; the file has %d, %x", workers, st.Bytes, st.SHA256, len(data), sha256.Sum256(data))
		}
		return data, st
	}
	want, one := build(1)
	if one.Runs < 10 || one.Ranges != 1 {
		t.Fatalf("one worker: %d runs, %d ranges; want at least 10 runs and one range", one.Runs, one.Ranges)
	}
	for workers := 2; workers <= 5; workers++ {
		got, st := build(workers)
		if st.Ranges != workers {
			t.Fatalf("%d workers: %d ranges, want as many", workers, st.Ranges)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d workers: a segment of %d bytes that differs from one worker's (%d bytes)", workers, len(got), len(want))
		}
		if st.Terms != one.Terms || st.Postings != one.Postings || st.Docs != one.Docs {
			t.Fatalf("%d workers: stats %+v, one worker's %+v", workers, st, one)
		}
	}
}

// TestRunRangesCover holds the cut of the vocabulary to its invariants: the ranges meet,
// cover every first byte and every term, and none is empty.
func TestRunRangesCover(t *testing.T) {
	cases := []struct {
		name    string
		terms   []string
		workers int
		ranges  int
	}{
		{"no terms", nil, 4, 1},
		{"one first byte", []string{"wa", "wb", "wc", "wd"}, 4, 1},
		{"two first bytes", []string{"a", "b"}, 4, 2},
		{"empty term and high bytes", []string{"", "\x00", "a", "m", "z", "\xff"}, 3, 3},
		{"one worker", []string{"a", "b", "c"}, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBuilder(tempPath(t, "x.kpst"), BuilderOptions{MergeWorkers: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Abort()
			if len(tc.terms) > 0 {
				if err := b.Add(1, tc.terms); err != nil {
					t.Fatal(err)
				}
			}
			order := b.vocab.sorted()
			rs := b.runRanges(order)
			if len(rs) != tc.ranges {
				t.Fatalf("%d ranges, want %d", len(rs), tc.ranges)
			}
			first, lo := 0, 0
			for i, r := range rs {
				if r.first != first || r.lo != lo || r.end <= r.first || (len(order) > 0 && r.hi <= r.lo) {
					t.Fatalf("range %d: first bytes [%d, %d), terms [%d, %d); want it to start at %d, %d and hold some", i, r.first, r.end, r.lo, r.hi, first, lo)
				}
				for _, id := range order[r.lo:r.hi] {
					if fb := firstByte(b.vocab.term(id)); fb < r.first || fb >= r.end {
						t.Fatalf("range %d [%d, %d) holds %q", i, r.first, r.end, b.vocab.term(id))
					}
				}
				first, lo = r.end, r.hi
			}
			if first != 256 || lo != len(order) {
				t.Fatalf("the ranges end at first byte %d, term %d of %d", first, lo, len(order))
			}
		})
	}
}
