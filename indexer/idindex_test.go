package indexer

import (
	"strconv"
	"strings"
	"testing"
)

// The index of ids answers as a map of strings would, whatever the hashes: with the real one,
// with every id colliding, and with collisions in between.
func TestIDIndex(t *testing.T) {
	hashes := []struct {
		name string
		hash func(string) uint64
	}{
		{"maphash", nil},
		{"all collide", func(string) uint64 { return 7 }},
		{"by length", func(s string) uint64 { return uint64(len(s)) }},
		{"one slot, the high bits by length", func(s string) uint64 { return uint64(len(s)) << 48 }},
	}
	ids := []string{"a", "b", "", "a", "10", "b", "", "11", "10", "é", "é"}
	for _, hc := range hashes {
		t.Run(hc.name, func(t *testing.T) {
			x := newIDIndex()
			if hc.hash != nil {
				x.hash = hc.hash
			}
			want := map[string]string{}
			for i, id := range ids {
				pos := "line " + strconv.Itoa(i+1)
				first, repeated := x.add(id, pos)
				wfirst, wrepeated := want[id]
				if !wrepeated {
					want[id] = pos
				}
				if first != wfirst || repeated != wrepeated {
					t.Errorf("add(%q, %q) = %q, %v; want %q, %v", id, pos, first, repeated, wfirst, wrepeated)
				}
			}
		})
	}
}

// TestIDIndexPositions: positions of the "word number" shape are stored as numbers, others as
// they are, and both come back as given; a table of position words that fills up keeps the
// rest as text.
func TestIDIndexPositions(t *testing.T) {
	x := newIDIndex()
	poss := []string{"line 6", "row 12", "document 3", "line 007", "line", "", "page 2 of 3", "line -1"}
	for i, p := range poss {
		if _, rep := x.add("id"+strconv.Itoa(i), p); rep {
			t.Fatalf("id%d repeated", i)
		}
	}
	for i := 0; i < 300; i++ { // more words than the table holds
		x.add("w"+strconv.Itoa(i), "w"+strconv.Itoa(i)+" 1")
	}
	for i, p := range poss {
		if first, rep := x.add("id"+strconv.Itoa(i), "line 99"); !rep || first != p {
			t.Errorf("id%d: first %q (repeated %v), want %q", i, first, rep, p)
		}
	}
	for _, i := range []int{0, 254, 299} {
		want := "w" + strconv.Itoa(i) + " 1"
		if first, rep := x.add("w"+strconv.Itoa(i), "x 1"); !rep || first != want {
			t.Errorf("w%d: first %q (repeated %v), want %q", i, first, rep, want)
		}
	}
}

// TestIDIndexBytes measures the bytes an id costs at a million JSONL ids (ids of the
// generated corpora, positions "line N"): the index must stay far below a map of strings.
func TestIDIndexBytes(t *testing.T) {
	const n = 1_000_000
	x := newIDIndex()
	for i := range n {
		x.add(strconv.Itoa(10_000_000+i), "line "+strconv.Itoa(i+1))
	}
	per := float64(x.arenaBytes()+8*len(x.slots)) / n
	t.Logf("%.1f bytes an id (arena %d, slots %d)", per, x.arenaBytes(), len(x.slots))
	if per > 32 {
		t.Errorf("%.1f bytes an id, want at most 32", per)
	}
}

// TestIDIndexChunks: ids over many chunks of the arena, and one longer than a chunk, are all
// found again with their positions, across the table's growths.
func TestIDIndexChunks(t *testing.T) {
	x := newIDIndex()
	long := strings.Repeat("x", 3*idChunk)
	var ids []string
	for i := range 300_000 {
		ids = append(ids, "doc-"+strconv.Itoa(i))
		if i == 150_000 {
			ids = append(ids, long)
		}
	}
	for i, id := range ids {
		if first, rep := x.add(id, "line "+strconv.Itoa(i+1)); rep {
			t.Fatalf("%.20q: repeated at first sight (first %q)", id, first)
		}
	}
	if len(x.arena) < 5 {
		t.Fatalf("%d chunks: the test needs several", len(x.arena))
	}
	for i, id := range ids {
		if first, rep := x.add(id, "line 0"); !rep || first != "line "+strconv.Itoa(i+1) {
			t.Fatalf("%.20q: first %q (repeated %v), want line %d", id, first, rep, i+1)
		}
	}
}

// BenchmarkIDIndexAdd adds ten million JSONL-style ids, as a 10M-passage build does (a table
// and arena far past the processor's caches), and reports the time an id.
func BenchmarkIDIndexAdd(b *testing.B) {
	const n = 10_000_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "s1-" + strconv.Itoa(i)
	}
	b.ResetTimer()
	for range b.N {
		x := newIDIndex()
		for i, id := range ids {
			if _, rep := x.add(id, "line "+strconv.Itoa(i+1)); rep {
				b.Fatalf("%s repeated", id)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/id")
}
