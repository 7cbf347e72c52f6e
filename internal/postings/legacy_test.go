package postings

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/framing"
)

// asLegacy rewrites a version 2 segment (uvarint blocks) in the envelope of version 1 (magic
// "KPST"), as builds before version 2 wrote it: the same payload, its checksum taken over the
// old header.
func asLegacy(tb testing.TB, seg []byte) []byte {
	tb.Helper()
	payload, err := legacyVarintSegmentFormat.Open(seg)
	if err != nil {
		tb.Fatal(err)
	}
	return legacySegmentFormat.Seal(append(legacySegmentFormat.Begin(), payload...))
}

// TestLegacySegmentOpens: the segments written before the blocks were packed (version 2)
// and before the magic changed (version 1) still open, verify and search as the same passages
// in a current segment, which is smaller; a passage store's file (magic "KPST" version 2) is
// refused as not a segment, whatever the checksum option.
func TestLegacySegmentOpens(t *testing.T) {
	cur, varint := smallSegment(t), smallVarintSegment(t)
	for _, v := range []struct {
		seg     []byte
		version uint32
	}{{cur, 3}, {varint, 2}} {
		if string(v.seg[:4]) != "KPSG" || binary.LittleEndian.Uint32(v.seg[4:]) != v.version {
			t.Fatalf("a new segment starts %q version %d, want KPSG version %d", v.seg[:4], binary.LittleEndian.Uint32(v.seg[4:]), v.version)
		}
	}
	if len(cur) >= len(varint) {
		t.Errorf("packed segment %d bytes, uvarint one %d", len(cur), len(varint))
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
	if got := search(write("v2.kpo", varint)); !reflect.DeepEqual(got, want) {
		t.Errorf("version 2 segment: %v, current: %v", got, want)
	}
	if got := search(write("old.kpo", asLegacy(t, varint))); !reflect.DeepEqual(got, want) {
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
