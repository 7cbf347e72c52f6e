package postings

import (
	"strconv"
	"testing"
)

// TestVocabAppendIDs holds the vocabulary's ids to a map's, ids in order of first sight, for
// passages whose new terms repeat within them and whose batches grow the table mid-way.
func TestVocabAppendIDs(t *testing.T) {
	v := newVocab()
	want := map[string]uint32{}
	var ids []uint32
	var hs []uint64
	for p := range 400 {
		var terms []string
		for i := range 1 + p%60 {
			terms = append(terms, "t"+strconv.Itoa((p*37+i*i)%(50+p*10)), "the")
		}
		ids, hs = v.appendIDs(ids[:0], terms, hs)
		if len(ids) != len(terms) {
			t.Fatalf("passage %d: %d ids for %d terms", p, len(ids), len(terms))
		}
		for i, term := range terms {
			w, ok := want[term]
			if !ok {
				w = uint32(len(want))
				want[term] = w
			}
			if ids[i] != w {
				t.Fatalf("passage %d, term %q: id %d, want %d", p, term, ids[i], w)
			}
			if got := string(v.term(ids[i])); got != term {
				t.Fatalf("term(%d) = %q, want %q", ids[i], got, term)
			}
		}
	}
	if v.len() != len(want) || len(v.slots) < 2*len(want) {
		t.Fatalf("%d terms in %d slots, want %d terms at a load of at most 1/2", v.len(), len(v.slots), len(want))
	}
}
