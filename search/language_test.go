package search

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// enterpriseLine writes the record of the shared Enterprise sample whose in_language is
// lang into a file of its own: the sample holds three languages in one file.
func enterpriseLine(t *testing.T, lang string) string {
	t.Helper()
	f, err := os.Open(sharedtest.Path(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"in_language":{"identifier":"`+lang+`"`) {
			p := filepath.Join(t.TempDir(), lang+".ndjson")
			if err := os.WriteFile(p, append(sc.Bytes(), '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no %s record in the sample (%v)", lang, sc.Err())
	return ""
}

func analyse(t *testing.T, analyzer, text string) []string {
	t.Helper()
	a, err := langanalysis.New(analyzer)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tk := range a.Analyze([]byte(text)) {
		out = append(out, string(tk.Term))
	}
	return out
}

// TestInflectedQueryNeedsTheIndexLanguage: an index of a non-English sample, its language
// detected, finds a passage from a query whose inflected form occurs nowhere in the corpus
// (only another form of the word does); the same query on the same input indexed as English
// finds nothing.
func TestInflectedQueryNeedsTheIndexLanguage(t *testing.T) {
	for _, tc := range []struct {
		name, lang  string
		input       func(t *testing.T) string
		query, form string // form: the form in the passage; query: another form of it
		title       string // of the document that must be found
	}{
		{name: "bgwiki dump", lang: "bg", query: "папата", form: "папа", title: "Григориански календар",
			input: func(t *testing.T) string {
				return sharedtest.Path(t, "data/mediawiki-xml-gensim/bgwiki-latest-pages-articles-shortened.xml.bz2")
			}},
		{name: "bgwiki dump, plural", lang: "bg", query: "църквите", form: "църква", title: "Григориански календар",
			input: func(t *testing.T) string {
				return sharedtest.Path(t, "data/mediawiki-xml-gensim/bgwiki-latest-pages-articles-shortened.xml.bz2")
			}},
		{name: "enterprise ruwiki", lang: "ru", query: "языками", form: "языка", title: "Squirrel",
			input: func(t *testing.T) string { return enterpriseLine(t, "ru") }},
		{name: "enterprise dewiki", lang: "de", query: "Programmiersprachen", form: "Programmiersprache", title: "Squirrel",
			input: func(t *testing.T) string { return enterpriseLine(t, "de") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input(t)
			an := langanalysis.For(tc.lang).Analyzer
			if q, f := analyse(t, an, tc.query), analyse(t, an, tc.form); len(q) != 1 || !slices.Equal(q, f) {
				t.Fatalf("%s analyzer: %q -> %q, %q -> %q: not one shared term", an, tc.query, q, tc.form, f)
			}
			if q, f := analyse(t, langanalysis.English, tc.query), analyse(t, langanalysis.English, tc.form); slices.Equal(q, f) {
				t.Fatalf("English analysis conflates %q and %q too (%q): the test would prove nothing", tc.query, tc.form, q)
			}
			found := func(language string) (*Index, []Hit) {
				dir := t.TempDir()
				sum, err := buildAt(context.Background(), at(dir), indexer.Options{
					Inputs: []indexer.InputSpec{{Path: in}}, Build: indexer.BuildOptions{Language: language}})
				if err != nil {
					t.Fatal(err)
				}
				ix, err := Open(t.Context(), at(dir), Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ix.Close() })
				if got := ix.Stats().Language; got != sum.Language.Language {
					t.Errorf("stats language %q, summary %+v", got, sum.Language)
				}
				hits, err := ix.Search(context.Background(), Request{Text: tc.query, K: 10})
				if err != nil {
					t.Fatal(err)
				}
				return ix, hits
			}
			ix, hits := found("") // detected
			if st := ix.Stats(); st.Language != tc.lang || st.Analyzer != an {
				t.Fatalf("detected language %q analyzer %q, want %q %q", st.Language, st.Analyzer, tc.lang, an)
			}
			if len(hits) == 0 || hits[0].Title != tc.title {
				t.Fatalf("%q on the %s index: %d hits, want %q first", tc.query, tc.lang, len(hits), tc.title)
			}
			if !strings.Contains(strings.ToLower(hits[0].Text), strings.ToLower(tc.form)) {
				t.Errorf("top passage lacks %q: %.200s", tc.form, hits[0].Text)
			}
			// The query's own form occurs in no passage: only analysis can match it.
			ix.gen.Passages.Each(t.Context(), func(_ uint32, p indexer.Passage) error {
				if slices.Contains(strings.Fields(strings.ToLower(p.Text)), strings.ToLower(tc.query)) {
					t.Errorf("passage %s contains %q itself", p.ID, tc.query)
				}
				return nil
			})
			if _, hits := found("en"); len(hits) != 0 {
				t.Errorf("%q on the index forced to en: %d hits (%q first), want none", tc.query, len(hits), hits[0].Title)
			}
		})
	}
}
