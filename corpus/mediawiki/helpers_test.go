package mediawiki

import (
	"compress/bzip2"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// gensimDir holds the shared sample dumps, relative to the shared data directory.
const gensimDir = "data/mediawiki-xml-gensim"

const (
	enwikiDump = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
	tableDump  = "enwiki-table-markup.xml.bz2"
	bgwikiDump = "bgwiki-latest-pages-articles-shortened.xml.bz2"
)

// The -update flag is shared by every golden test of the package: it is registered here only
// if no other test file did, and read through flag.Lookup.
var _ = registerUpdateFlag()

func registerUpdateFlag() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
	return true
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// readDump decompresses one of the shared gensim dumps.
func readDump(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(sharedtest.Path(t, gensimDir+"/"+name))
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

// readAll drains a reader, collecting documents and record errors; it fails on any other error.
func readAll(t testing.TB, r document.Reader) ([]document.Document, []*document.RecordError) {
	t.Helper()
	var docs []document.Document
	var bad []*document.RecordError
	for range 1_000_000 {
		d, err := r.Next(context.Background())
		if err == io.EOF {
			return docs, bad
		}
		var re *document.RecordError
		if errors.As(err, &re) {
			bad = append(bad, re)
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		docs = append(docs, d)
	}
	t.Fatal("reader did not reach EOF")
	return nil, nil
}

// forbiddenMarkup must never survive cleaning of the real dumps.
var forbiddenMarkup = []string{"{{", "}}", "{|", "|}", "<ref", "</ref", "[[", "]]", "<!--", "-->",
	"&amp;", "&nbsp;", "&lt;", "&quot;", "&ndash;", "''", "__TOC__", "__NOTOC__", "[http",
	"<br", "<math", "<gallery", "thumb|", "Category:", "File:", "Image:", "Категория:", "Файл:"}

// fmtDoc prints every field of a document, for comparing readers.
func fmtDoc(d document.Document) string { return fmt.Sprintf("%#v", d) }

// fmtStats prints the counts of a reader's stats.
func fmtStats(docs, bad, repaired int, bytesRead int64, skipped, languages map[string]int) string {
	return fmt.Sprintf("docs %d bad %d repaired %d bytes %d skipped %v languages %v", docs, bad, repaired, bytesRead, skipped, languages)
}
