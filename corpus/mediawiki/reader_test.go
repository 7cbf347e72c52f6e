package mediawiki

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/document"
)

func TestMediaWikiRealDumps(t *testing.T) {
	tests := []struct {
		file      string
		docs      int
		skipped   map[string]int
		bytesRead int64 // decompressed sizes, from SOURCE.txt
		titles    []string
		urlPrefix string
	}{
		{enwikiDump, 106, map[string]int{document.SkipRedirect: 99, document.SkipNamespace: 1}, 6_089_746,
			[]string{"Anarchism", "Autism", "Actrius", "An American in Paris", "Abraham Lincoln"},
			"https://en.wikipedia.org/wiki/"},
		{tableDump, 5, map[string]int{}, 251_853,
			[]string{"Constructive vote of no confidence", "List of Prison Break characters",
				"Academy Award for Best Production Design", "Economy of Estonia", "Brahui language"},
			"https://en.wikipedia.org/wiki/"}, // no <siteinfo>: the default base
		{bgwikiDump, 1, map[string]int{document.SkipNamespace: 2}, 486_088,
			[]string{"Григориански календар"}, "https://bg.wikipedia.org/wiki/"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := NewReader(bytes.NewReader(readDump(t, tt.file)), tt.file, "gensim")
			docs, bad := readAll(t, r)
			if len(bad) > 0 {
				t.Fatalf("%d record errors, first: %v", len(bad), bad[0])
			}
			st := r.Stats()
			if len(docs) != tt.docs || st.Documents != tt.docs {
				t.Errorf("documents: got %d (stats %d), want %d", len(docs), st.Documents, tt.docs)
			}
			for reason, n := range tt.skipped {
				if st.Skipped[reason] != n {
					t.Errorf("skipped %s: got %d, want %d", reason, st.Skipped[reason], n)
				}
			}
			if st.Skipped[document.SkipEmpty] != 0 || st.Bad != 0 || st.Repaired != 0 {
				t.Errorf("unexpected counts: %+v", st)
			}
			if st.BytesRead != tt.bytesRead {
				t.Errorf("BytesRead = %d, want %d", st.BytesRead, tt.bytesRead)
			}
			byTitle := map[string]document.Document{}
			for _, d := range docs {
				byTitle[d.Title] = d
				checkCleanDoc(t, d)
				if !strings.HasPrefix(d.URL, tt.urlPrefix) || d.Source != "gensim" || d.Date.IsZero() {
					t.Errorf("%q: URL %q, source %q, date %v", d.Title, d.URL, d.Source, d.Date)
				}
			}
			for _, title := range tt.titles {
				if _, ok := byTitle[title]; !ok {
					t.Errorf("article %q not read", title)
				}
			}
		})
	}
}

// checkCleanDoc asserts that a document carries no markup and well-formed sections.
func checkCleanDoc(t *testing.T, d document.Document) {
	t.Helper()
	if d.ID == "" || d.Title == "" || len(d.Sections) == 0 {
		t.Errorf("incomplete document %+v", d)
	}
	for _, s := range d.Sections {
		for _, m := range forbiddenMarkup {
			if strings.Contains(s.Text, m) || strings.Contains(s.Name, m) {
				i := max(strings.Index(s.Text, m)-60, 0)
				t.Errorf("%q section %q contains %q: ...%s...", d.Title, s.Name, m,
					s.Text[i:min(len(s.Text), i+140)])
			}
		}
		if s.Text == "" || s.Text != strings.TrimSpace(s.Text) || strings.Contains(s.Text, "\n\n\n") {
			t.Errorf("%q section %q: badly delimited text %q", d.Title, s.Name, s.Text)
		}
		if !utf8.ValidString(s.Text) {
			t.Errorf("%q section %q: invalid UTF-8", d.Title, s.Name)
		}
		if document.DroppedSection(s.Name) {
			t.Errorf("%q: section %q should have been dropped", d.Title, s.Name)
		}
	}
}

func TestMediaWikiDocumentFields(t *testing.T) {
	r := NewReader(bytes.NewReader(readDump(t, enwikiDump)), enwikiDump, "enwiki")
	docs, _ := readAll(t, r)
	var actrius *document.Document
	for i := range docs {
		if docs[i].Title == "Actrius" {
			actrius = &docs[i]
		}
	}
	if actrius == nil {
		t.Fatal("Actrius not found")
	}
	want := time.Date(2016, 4, 30, 16, 32, 45, 0, time.UTC)
	if actrius.ID != "330" || actrius.URL != "https://en.wikipedia.org/wiki/Actrius" || !actrius.Date.Equal(want) {
		t.Errorf("Actrius: id %q url %q date %v", actrius.ID, actrius.URL, actrius.Date)
	}
	var names []string
	for _, s := range actrius.Sections {
		names = append(names, s.Name)
	}
	wantNames := "|Synopsis|Cast|Recognition > Screenings|Recognition > Reception|Recognition > Awards and nominations"
	if got := strings.Join(names, "|"); got != wantNames {
		t.Errorf("Actrius sections:\n got %s\nwant %s", got, wantNames)
	}
}

// goldenArticles are compared section by section with testdata/*.golden.
var goldenArticles = []struct{ dump, title, golden string }{
	{enwikiDump, "Actrius", "actrius.golden"},
	{enwikiDump, "An American in Paris", "an-american-in-paris.golden"},
	{enwikiDump, "Albedo", "albedo.golden"},
	{tableDump, "Constructive vote of no confidence", "constructive-vote.golden"},
	{bgwikiDump, "Григориански календар", "bg-gregorian-calendar.golden"},
}

func TestMediaWikiGolden(t *testing.T) {
	dumps := map[string][]document.Document{}
	for _, g := range goldenArticles {
		if _, ok := dumps[g.dump]; !ok {
			docs, _ := readAll(t, NewReader(bytes.NewReader(readDump(t, g.dump)), g.dump, "golden"))
			dumps[g.dump] = docs
		}
		var doc *document.Document
		for i, d := range dumps[g.dump] {
			if d.Title == g.title {
				doc = &dumps[g.dump][i]
			}
		}
		if doc == nil {
			t.Errorf("%s: %q not found", g.dump, g.title)
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\nid: %s\nurl: %s\ndate: %s\n", doc.Title, doc.ID, doc.URL, doc.Date.Format(time.RFC3339))
		for _, s := range doc.Sections {
			fmt.Fprintf(&b, "\n## [%s]\n%s\n", s.Name, s.Text)
		}
		path := filepath.Join("testdata", g.golden)
		if updateGolden() {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run MediaWikiGolden -update)", err)
		}
		if got := b.String(); got != string(want) {
			t.Errorf("%s differs from %s (rerun with -update after checking):\n%s", g.title, path, firstDiff(got, string(want)))
		}
	}
}

func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
	return ""
}
