package kpst

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/smaps"
)

// mappingRSS returns the resident bytes of the mapping starting at b's first byte.
func mappingRSS(t *testing.T, b []byte) int {
	t.Helper()
	n, err := smaps.MappingRSS(b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEachReleasesPages: a walk of the whole store keeps about releaseEvery bytes of it
// resident, not the store (8 MB here, every page of it resident when the walk starts, since
// opening verifies its checksum), and the passages it handed out, and the store itself, read
// the same afterwards.
func TestEachReleasesPages(t *testing.T) {
	const n = 4000
	text := strings.Repeat("passage text ", 160) // about 2 KB a record
	s := openTextStore(t, n, func(i int) string { return strconv.Itoa(i) + text })
	data := s.segs[0].data
	if before := mappingRSS(t, data); before < len(data)*9/10 {
		t.Fatalf("%d of %d bytes resident after opening: want the whole store", before, len(data))
	}
	s.releaseEvery = 1 << 20
	var got []string
	if err := s.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
		got = append(got, p.Text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rss := mappingRSS(t, data); rss > 2*s.releaseEvery+len(s.segs[0].offsets)+2*pageSize {
		t.Errorf("%d of %d bytes resident after Each: want about releaseEvery (%d) and the offset table", rss, len(data), s.releaseEvery)
	}
	for i, g := range got {
		if want := strconv.Itoa(i) + text; g != want {
			t.Fatalf("passage %d reads %.20q after the walk, want %.20q", i, g, want)
		}
	}
	// The released pages read back from the file (Get decodes from the mapping again).
	for i := range n {
		p, err := s.Get(t.Context(), uint32(i))
		if want := strconv.Itoa(i) + text; err != nil || p.Text != want {
			t.Fatalf("Get(%d) after the walk = %.20q, %v; want %.20q", i, p.Text, err, want)
		}
	}
}
