package qdrant

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus"
)

// TestAssignIDs: known FNV-1a 32-bit collisions get distinct ids, the first term of each
// pair (sorted) keeps its hash, and the assignment depends only on the vocabulary.
func TestAssignIDs(t *testing.T) {
	tests := []struct {
		vocab []string
		moved int
	}{
		{[]string{"bone", "vitamin"}, 0},
		{[]string{"costarring", "liquid"}, 1},
		{[]string{"altarage", "altarages", "declinate", "macallums", "zinke", "zinkes"}, 3},
	}
	for _, tc := range tests {
		ids, moved := assignIDs(tc.vocab)
		if moved != tc.moved {
			t.Errorf("%v: moved %d, want %d", tc.vocab, moved, tc.moved)
		}
		seen := map[uint32]string{}
		for _, term := range tc.vocab {
			if other, dup := seen[ids[term]]; dup {
				t.Errorf("%q and %q share id %d", term, other, ids[term])
			}
			seen[ids[term]] = term
		}
		if ids[tc.vocab[0]] != termHash(tc.vocab[0]) {
			t.Errorf("%q: id %d, want its hash", tc.vocab[0], ids[tc.vocab[0]])
		}
		again, _ := assignIDs(tc.vocab)
		if !reflect.DeepEqual(ids, again) {
			t.Errorf("%v: assignment not deterministic", tc.vocab)
		}
	}
}

func TestTermsRecordRoundTrip(t *testing.T) {
	rec := termsRecord(9, 42, 17, []string{"vitamin", "d", ""}, []int{3, 1, 2})
	var terms []string
	var freqs []int
	seq, key, n, err := decodeTerms(rec, func(t []byte, f int) { terms = append(terms, string(t)); freqs = append(freqs, f) })
	if err != nil || seq != 9 || key != 42 || n != 17 || !reflect.DeepEqual(terms, []string{"vitamin", "d", ""}) || !reflect.DeepEqual(freqs, []int{3, 1, 2}) {
		t.Fatalf("decoded %d %d %d %v %v %v", seq, key, n, terms, freqs, err)
	}
	if _, _, _, err := decodeTerms(rec[:len(rec)-1], func([]byte, int) {}); err == nil {
		t.Fatal("truncated record decoded")
	}
}

// FuzzDecodeTerms: any bytes decode or fail, never panic, and whatever decodes re-encodes
// to the same bytes.
func FuzzDecodeTerms(f *testing.F) {
	f.Add(termsRecord(1, 2, 3, []string{"a", "bc"}, []int{1, 2}))
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, rec []byte) {
		var terms []string
		var freqs []int
		seq, key, n, err := decodeTerms(rec, func(b []byte, f int) { terms = append(terms, string(b)); freqs = append(freqs, f) })
		if err != nil {
			return
		}
		again := termsRecord(seq, key, n, terms, freqs)
		s2, k2, n2, err := decodeTerms(again, func([]byte, int) {})
		if err != nil || s2 != seq || k2 != key || n2 != n {
			t.Fatalf("re-encoded record decodes to %d %d %d %v", s2, k2, n2, err)
		}
	})
}

// FuzzPayloadPassage: a passage survives the payload round trip.
func FuzzPayloadPassage(f *testing.F) {
	f.Add("a#0", "a", "Title", "Vitamin D | vitamin d", "wiki", int64(86400), 0)
	f.Add("", "", "", "", "", int64(0), 3)
	f.Fuzz(func(t *testing.T, id, doc, title, text, source string, unix int64, ordinal int) {
		for _, s := range []string{id, doc, title, text, source} {
			if !utf8.ValidString(s) {
				return // JSON (and so the payload) carries only valid UTF-8; corpus readers ensure it
			}
		}
		p := corpus.Passage{ID: id, DocID: doc, Title: title, Text: text, Source: source, Ordinal: ordinal}
		if unix > 0 && unix < 1<<35 {
			p.Date = unixUTC(unix)
		}
		pl, err := passagePayload(7, &p, 3, "g")
		if err != nil {
			t.Fatal(err)
		}
		got, err := payloadPassage(pl)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Fatalf("round trip: %+v, want %+v", got, p)
		}
	})
}
