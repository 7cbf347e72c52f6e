package postings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/framing"
)

// asLegacy rewrites a current segment in the envelope of version 1 (magic "KPST"), as
// builds before version 2 wrote it: the same payload, its checksum taken over the old
// header.
func asLegacy(tb testing.TB, seg []byte) []byte {
	tb.Helper()
	payload, err := segmentFormat.Open(seg)
	if err != nil {
		tb.Fatal(err)
	}
	return legacySegmentFormat.Seal(append(legacySegmentFormat.Begin(), payload...))
}

// TestLegacySegmentOpens: a segment written before the magic changed still opens, verifies
// and searches as the same segment in the current envelope; a passage store's file (magic
// "KPST" version 2) is refused as not a segment, whatever the checksum option.
func TestLegacySegmentOpens(t *testing.T) {
	cur := smallSegment(t)
	if string(cur[:4]) != "KPSG" {
		t.Fatalf("a new segment starts %q, want KPSG", cur[:4])
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	search := func(path string) []Hit {
		t.Helper()
		seg, err := Open(path, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer seg.Close()
		if err := seg.Verify(context.Background()); err != nil {
			t.Fatal(err)
		}
		var terms []string
		for i := 0; i < seg.Terms() && len(terms) < 6; i++ {
			terms = append(terms, seg.termAt(i))
		}
		x, _ := NewSearcher([]*Segment{seg}, SearcherOptions{Workers: 1})
		hits, err := x.Search(context.Background(), Query{Terms: terms, K: 20}, Scoring{K1: 1.2, B: 0.4, Docs: int64(seg.tr.docs), Tokens: int64(seg.tr.tokens)})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	want := search(write("new.kpo", cur))
	if len(want) == 0 {
		t.Fatal("no hits on the current segment")
	}
	if got := search(write("old.kpo", asLegacy(t, cur))); !reflect.DeepEqual(got, want) {
		t.Errorf("legacy segment: %v, current: %v", got, want)
	}

	// A passage store's envelope: the old magic under the store's version.
	store := framing.Format{Name: "passage store", Magic: "KPST", Version: 2}
	payload, _ := segmentFormat.Open(cur)
	path := write("store.kpst", store.Seal(append(store.Begin(), payload...)))
	for _, skip := range []bool{false, true} {
		_, err := Open(path, OpenOptions{SkipChecksum: skip})
		if !errors.Is(err, framing.ErrFormat) || !strings.Contains(err.Error(), "not a postings segment") || !strings.Contains(err.Error(), path) {
			t.Errorf("skip checksum %v: a passage store opened as a segment: %v", skip, err)
		}
	}
}
