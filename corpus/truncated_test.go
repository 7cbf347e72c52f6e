package corpus

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestMediaWikiTruncated cuts a real dump inside a page, or between pages, and reads it as a
// plain XML file through Open: the reader must stop with a fatal error (not a *RecordError
// that --skip-bad would skip) naming the file, the page and its line, after the complete pages
// before it. A cut between pages leaves only whole pages, so only the missing </mediawiki>
// tells it from the end of the dump; a dump cut that way once read to a clean EOF.
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
	endOf := func(n int) int { // offset after the n-th "</page>" and its line end
		off := nth(n)
		off += bytes.Index(full[off:], []byte("</page>")) + len("</page>\n")
		return off
	}
	lineAt := func(data []byte, off int) string { return strconv.Itoa(1 + bytes.Count(data[:off], []byte("\n"))) }
	inside := func(page int) string {
		return "truncated input: end of file inside page " + strconv.Itoa(page) + " (line "
	}
	between := func(data []byte, page int) string {
		return "truncated input: end of file at line " + lineAt(data, len(data)) + " after page " + strconv.Itoa(page) +
			" (which ended on line " + lineAt(data, bytes.LastIndex(data, []byte("</page>"))) + ") without </mediawiki>"
	}
	twice := append(append([]byte{}, full...), full[:endOf(2)]...) // a whole dump, then one cut
	tests := []struct {
		name     string
		data     []byte
		complete int    // pages before the cut
		want     string // the error, after the file name
	}{
		{"inside the second page", full[:nth(2)+40], 1, inside(2)},
		{"inside the last page", full[:nth(pages)+100], pages - 1, inside(pages)},
		{"just after a page start", full[:nth(3)+len("<page>")], 2, inside(3)},
		{"between pages", full[:endOf(2)], 2, between(full[:endOf(2)], 2)},
		{"between pages, no line end", full[:endOf(2)-1], 2, between(full[:endOf(2)-1], 2)},
		{"after the last page", full[:endOf(pages)], pages, between(full[:endOf(pages)], pages)},
		{"end tag cut", full[:bytes.LastIndex(full, []byte("</mediawiki>"))+5], pages,
			between(full[:bytes.LastIndex(full, []byte("</mediawiki>"))+5], pages)},
		{"before any page", full[:nth(1)], 0, "truncated input: end of file at line " + lineAt(full, nth(1)) +
			" before any page and without </mediawiki>"},
		{"a whole dump then a cut one", twice, pages + 2, between(twice, pages+2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.xml")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
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
			if want := path + ": " + tt.want; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q, want prefix %q", err, want)
			}
			st := r.Stats()
			if st.Documents+sumSkipped(st) != tt.complete {
				t.Errorf("%d documents + %d skipped before the cut, want %d pages", st.Documents, sumSkipped(st), tt.complete)
			}
		})
	}
	// The whole dump still reads to a clean EOF.
	path := filepath.Join(t.TempDir(), "whole.xml")
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, st := readPath(t, path, Options{}); st.Documents+sumSkipped(st) != pages {
		t.Errorf("whole dump: %d documents + %d skipped, want %d pages", st.Documents, sumSkipped(st), pages)
	}
	// Pages without the root (one block of a multistream dump, extracted on its own) have no
	// end tag to miss: they read to a clean EOF.
	path = filepath.Join(t.TempDir(), "block.xml")
	if err := os.WriteFile(path, full[nth(1):endOf(2)], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, st := readPath(t, path, Options{}); st.Documents+sumSkipped(st) != 2 {
		t.Errorf("pages without a root: %d documents + %d skipped, want 2 pages", st.Documents, sumSkipped(st))
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

// A compressed JSON lines input cut short is an error naming the file, the line and that the
// input is truncated, after the documents before that line.
func TestTruncatedGzipNamesItsLine(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := range 3000 { // past what opening the input reads ahead
		fmt.Fprintf(zw, `{"_id":"d%d","title":"T%d","text":"Some text of document %d, long enough to be a passage."}`+"\n", i, i, i)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "cut.jsonl.gz")
	if err := os.WriteFile(path, buf.Bytes()[:buf.Len()-200], 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next(context.Background())
		if err == nil {
			n++
			continue
		}
		if want := fmt.Sprintf("line %d: truncated input", n+1); !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one naming %s and %q", err, path, want)
		}
		break
	}
	if n < 2900 || n >= 3000 {
		t.Errorf("%d documents before the error, want all but the last few of 3,000", n)
	}
}

// A JSON lines file cut inside its last line is a fatal error naming the file and the line,
// even with SkipBad (it was one bad record, and the build succeeded); a last line without a
// line end that is whole JSON, or a bad line that does end, is not truncation.
func TestJSONLinesTruncated(t *testing.T) {
	const a, b = `{"id":"a","title":"Apples","text":"Apples grow on trees."}`, `{"id":"b","title":"Bananas","text":"Bananas grow in bunches."}`
	tests := []struct {
		name, data string
		fatal      string // "" for none
		docs, bad  int
	}{
		{"cut inside the last line", a + "\n" + b[:30], "cut.jsonl: line 2: truncated input", 1, 0},
		{"no final line end", a + "\n" + b, "", 2, 0},
		{"a bad line that ends", a + "\n" + b[:30] + "\n" + b + "\n", "", 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.jsonl")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			docs := 0
			for {
				_, err := r.Next(context.Background())
				if err == io.EOF {
					break
				}
				if IsRecordError(err) {
					continue // skipped, as SkipBad does
				}
				if err != nil {
					if tt.fatal == "" || !strings.Contains(err.Error(), tt.fatal) {
						t.Fatalf("error %v, want %q", err, tt.fatal)
					}
					if docs != tt.docs {
						t.Errorf("%d documents before the error, want %d", docs, tt.docs)
					}
					return
				}
				docs++
			}
			if tt.fatal != "" {
				t.Fatalf("read to the end: want %q", tt.fatal)
			}
			if st := r.Stats(); docs != tt.docs || st.Bad != tt.bad {
				t.Errorf("%d documents, %d bad; want %d and %d", docs, st.Bad, tt.docs, tt.bad)
			}
		})
	}
}
