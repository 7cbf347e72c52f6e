package corpus

import (
	"context"
	"io"
	"maps"
	"os"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// readLanguages reads a whole input and returns its reader's final stats.
func readLanguages(t *testing.T, path string, opts Options) ReadStats {
	t.Helper()
	r, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		_, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil && !IsRecordError(err) {
			t.Fatal(err)
		}
	}
	return r.Stats()
}

// TestReadersReportLanguage: each reader reports the language it detected, per document.
func TestReadersReportLanguage(t *testing.T) {
	siteinfo := func(inner string) string {
		return `<mediawiki><siteinfo>` + inner + `</siteinfo><page><title>A</title><ns>0</ns><id>1</id>` +
			`<revision><text>Some text here.</text></revision></page></mediawiki>`
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path, text string
		want             map[string]int
		all              string // instead of want: every document is in this language
	}{
		{name: "siteinfo dbname", path: "db.xml", text: siteinfo(`<dbname>dewiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base>`), want: map[string]int{"de": 1}},
		{name: "siteinfo base URL", path: "base.xml", text: siteinfo(`<base>https://ru.wikipedia.org/wiki/Main</base>`), want: map[string]int{"ru": 1}},
		{name: "no siteinfo", path: "none.xml", text: siteinfo(``), want: nil},
		{name: "jsonl", path: "docs.jsonl", text: `{"id":"1","title":"A","text":"Some text."}` + "\n", want: nil},
		{name: "bgwiki dump (UTF-16)", path: sharedtest.Path(t, "data/mediawiki-xml-gensim/bgwiki-latest-pages-articles-shortened.xml.bz2"), all: "bg"},
		{name: "enwiki dump", path: sharedtest.Path(t, "data/mediawiki-xml-gensim/testcorpus.xml.bz2"), all: "en"},
		{name: "enterprise in_language", path: sharedtest.Path(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson"), want: map[string]int{"de": 1, "en": 1, "ru": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.text != "" {
				path = dir + "/" + tc.path
				if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st := readLanguages(t, path, Options{})
			want := tc.want
			if tc.all != "" {
				if st.Documents == 0 {
					t.Fatal("no documents")
				}
				want = map[string]int{tc.all: st.Documents}
			}
			if !maps.Equal(st.Languages, want) {
				t.Errorf("languages %v, want %v", st.Languages, want)
			}
		})
	}
}
