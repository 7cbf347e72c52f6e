package indexer

import (
	"strconv"
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
