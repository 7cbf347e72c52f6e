package corpus

import (
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestMediaWikiTruncated cuts a real dump inside a page and reads it as a plain XML file
// through Open: the reader must stop with a fatal error (not a *RecordError that --skip-bad
// would skip) naming the file, the page and its line, after the complete pages before it.
func TestMediaWikiTruncated(t *testing.T) {
	full := readGensimDump(t, "testcorpus.xml.bz2")
	pages := bytes.Count(full, []byte("<page>"))
	if pages < 3 {
		t.Fatalf("fixture has %d pages", pages)
	}
	nth := func(n int) int { // offset of the n-th (1-based) "<page>"
		off := -1
		for range n {
			off += 1 + bytes.Index(full[off+1:], []byte("<page>"))
		}
		return off
	}
	tests := []struct {
		name     string
		cut      int // bytes kept
		complete int // pages before the cut
		page     int // the truncated page
	}{
		{"inside the second page", nth(2) + 40, 1, 2},
		{"inside the last page", nth(pages) + 100, pages - 1, pages},
		{"just after a page start", nth(3) + len("<page>"), 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.xml")
			if err := os.WriteFile(path, full[:tt.cut], 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var docs int
			for {
				_, err = r.Next(context.Background())
				if err != nil && IsRecordError(err) {
					t.Fatalf("truncation reported as a bad record (skippable): %v", err)
				}
				if err != nil {
					break
				}
				docs++
			}
			if errors.Is(err, io.EOF) {
				t.Fatalf("truncated dump read to a clean EOF after %d documents", docs)
			}
			want := path + ": truncated input: end of file inside page " + strconv.Itoa(tt.page) + " (line "
			if !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q, want prefix %q", err, want)
			}
			st := r.Stats()
			if st.Documents+sumSkipped(st) != tt.complete {
				t.Errorf("%d documents + %d skipped before the cut, want %d pages", st.Documents, sumSkipped(st), tt.complete)
			}
		})
	}
}

func sumSkipped(s ReadStats) int {
	n := 0
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// readGensimDump decompresses one of the shared gensim MediaWiki dumps.
func readGensimDump(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(sharedtest.Path(t, "data/mediawiki-xml-gensim/"+name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		t.Fatalf("decompressing %s: %v", name, err)
	}
	return data
}
