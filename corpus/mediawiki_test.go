package corpus

import (
	"bytes"
	"compress/bzip2"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

const mwGensimDir = "../../shared/data/mediawiki-xml-gensim"

const (
	mwEnwikiDump = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
	mwTableDump  = "enwiki-table-markup.xml.bz2"
	mwBgwikiDump = "bgwiki-latest-pages-articles-shortened.xml.bz2"
)

// The -update flag is shared by every golden test of the package: it is registered here only
// if no other test file did, and read through flag.Lookup.
var _ = mwRegisterUpdateFlag()

func mwRegisterUpdateFlag() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
	return true
}

func mwUpdateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// mwReadDump decompresses one of the shared gensim dumps.
func mwReadDump(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(mwGensimDir, name))
	if err != nil {
		t.Fatalf("shared data missing (../shared must sit beside the repo): %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		t.Fatalf("decompressing %s: %v", name, err)
	}
	return data
}

// mwReadAll drains a reader, collecting documents and record errors; it fails on any other error.
func mwReadAll(t testing.TB, r Reader) ([]Document, []*RecordError) {
	t.Helper()
	var docs []Document
	var bad []*RecordError
	for range 1_000_000 {
		d, err := r.Next(context.Background())
		if err == io.EOF {
			return docs, bad
		}
		var re *RecordError
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

// mwForbiddenMarkup must never survive cleaning of the real dumps.
var mwForbiddenMarkup = []string{"{{", "}}", "{|", "|}", "<ref", "</ref", "[[", "]]", "<!--", "-->",
	"&amp;", "&nbsp;", "&lt;", "&quot;", "&ndash;", "''", "__TOC__", "__NOTOC__", "[http",
	"<br", "<math", "<gallery", "thumb|", "Category:", "File:", "Image:", "Категория:", "Файл:"}

func TestMediaWikiRealDumps(t *testing.T) {
	tests := []struct {
		file      string
		docs      int
		skipped   map[string]int
		bytesRead int64 // decompressed sizes, from SOURCE.txt
		titles    []string
		urlPrefix string
	}{
		{mwEnwikiDump, 106, map[string]int{SkipRedirect: 99, SkipNamespace: 1}, 6_089_746,
			[]string{"Anarchism", "Autism", "Actrius", "An American in Paris", "Abraham Lincoln"},
			"https://en.wikipedia.org/wiki/"},
		{mwTableDump, 5, map[string]int{}, 251_853,
			[]string{"Constructive vote of no confidence", "List of Prison Break characters",
				"Academy Award for Best Production Design", "Economy of Estonia", "Brahui language"},
			"https://en.wikipedia.org/wiki/"}, // no <siteinfo>: the default base
		{mwBgwikiDump, 1, map[string]int{SkipNamespace: 2}, 486_088,
			[]string{"Григориански календар"}, "https://bg.wikipedia.org/wiki/"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := NewMediaWikiReader(bytes.NewReader(mwReadDump(t, tt.file)), tt.file, "gensim")
			docs, bad := mwReadAll(t, r)
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
			if st.Skipped[SkipEmpty] != 0 || st.Bad != 0 || st.Repaired != 0 {
				t.Errorf("unexpected counts: %+v", st)
			}
			if st.BytesRead != tt.bytesRead {
				t.Errorf("BytesRead = %d, want %d", st.BytesRead, tt.bytesRead)
			}
			byTitle := map[string]Document{}
			for _, d := range docs {
				byTitle[d.Title] = d
				mwCheckCleanDoc(t, d)
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

// mwCheckCleanDoc asserts that a document carries no markup and well-formed sections.
func mwCheckCleanDoc(t *testing.T, d Document) {
	t.Helper()
	if d.ID == "" || d.Title == "" || len(d.Sections) == 0 {
		t.Errorf("incomplete document %+v", d)
	}
	for _, s := range d.Sections {
		for _, m := range mwForbiddenMarkup {
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
		if wkDroppedSection(s.Name) {
			t.Errorf("%q: section %q should have been dropped", d.Title, s.Name)
		}
	}
}

func TestMediaWikiDocumentFields(t *testing.T) {
	r := NewMediaWikiReader(bytes.NewReader(mwReadDump(t, mwEnwikiDump)), mwEnwikiDump, "enwiki")
	docs, _ := mwReadAll(t, r)
	var actrius *Document
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

// mwGoldenArticles are compared section by section with testdata/mediawiki/*.golden.
var mwGoldenArticles = []struct{ dump, title, golden string }{
	{mwEnwikiDump, "Actrius", "actrius.golden"},
	{mwEnwikiDump, "An American in Paris", "an-american-in-paris.golden"},
	{mwEnwikiDump, "Albedo", "albedo.golden"},
	{mwTableDump, "Constructive vote of no confidence", "constructive-vote.golden"},
	{mwBgwikiDump, "Григориански календар", "bg-gregorian-calendar.golden"},
}

func TestMediaWikiGolden(t *testing.T) {
	dumps := map[string][]Document{}
	for _, g := range mwGoldenArticles {
		if _, ok := dumps[g.dump]; !ok {
			docs, _ := mwReadAll(t, NewMediaWikiReader(bytes.NewReader(mwReadDump(t, g.dump)), g.dump, "golden"))
			dumps[g.dump] = docs
		}
		var doc *Document
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
		path := filepath.Join("testdata", "mediawiki", g.golden)
		if mwUpdateGolden() {
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
			t.Errorf("%s differs from %s (rerun with -update after checking):\n%s", g.title, path, mwFirstDiff(got, string(want)))
		}
	}
}

func mwFirstDiff(got, want string) string {
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

// mwBrokenFixture has a malformed page in the middle, an unterminated page, a page with invalid
// UTF-8 and every kind of skip.
const mwBrokenFixture = `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">
  <siteinfo>
    <base>https://fr.wikipedia.org/wiki/Wikip%C3%A9dia:Accueil_principal</base>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">Dosiero</namespace>
      <namespace key="14" case="first-letter">Kategorio</namespace>
    </namespaces>
  </siteinfo>
  <page>
    <title>Première page</title>
    <ns>0</ns>
    <id>1</id>
    <revision>
      <timestamp>2020-01-02T03:04:05Z</timestamp>
      <text xml:space="preserve">Texte '''gras''' [[Dosiero:X.jpg|vignette|légende]] fin.
[[Kategorio:Test]]</text>
    </revision>
  </page>
  <page>
    <title>Cassée</title>
    <ns>0</ns>
    <id>2</id>
    <revision>
      <text>ceci n'est pas fermé</revisio>
  </page>
  <page>
    <title>Troisième</title>
    <ns>0</ns>
    <id>3</id>
    <revision><timestamp>2021-05-06T07:08:09Z</timestamp><text>Troisième texte.</text></revision>
  </page>
  <page>
    <title>Sans fin</title>
    <ns>0</ns>
    <id>4</id>
  <page>
    <title>Redirection</title>
    <ns>0</ns>
    <id>5</id>
    <revision><text>#REDIRECTION [[Ailleurs]]</text></revision>
    <redirect title="Ailleurs" />
  </page>
  <page>
    <title>Discussion:Rien</title>
    <ns>1</ns>
    <id>6</id>
    <revision><text>bla</text></revision>
  </page>
  <page>
    <title>Vide</title>
    <ns>0</ns>
    <id>7</id>
    <revision><text>{{Palette}}
[[Kategorio:Vide]]</text></revision>
  </page>
  <page>
    <title>Octets \xff invalides</title>
    <ns>0</ns>
    <id>8</id>
    <revision><text>Un octet invalide \xfe ici.</text></revision>
  </page>
</mediawiki>
`

// mwLineOf returns the 1-based line of the n-th occurrence (1-based) of sub in s.
func mwLineOf(s, sub string, n int) int {
	off := 0
	for range n {
		k := strings.Index(s[off:], sub)
		if k < 0 {
			return -1
		}
		off += k + len(sub)
	}
	return strings.Count(s[:off], "\n") + 1
}

func TestMediaWikiBrokenPageRecovery(t *testing.T) {
	fixture := strings.ReplaceAll(mwBrokenFixture, `\xff`, "\xff")
	fixture = strings.ReplaceAll(fixture, `\xfe`, "\xfe")
	r := NewMediaWikiReader(strings.NewReader(fixture), "broken.xml", "test")
	ctx := context.Background()

	type step struct {
		title string // document expected, or
		pos   string // record error expected at this position
	}
	steps := []step{
		{title: "Première page"},
		{pos: fmt.Sprintf("page 2 (line %d)", mwLineOf(fixture, "<page>", 2))},
		{title: "Troisième"},
		{pos: fmt.Sprintf("page 4 (line %d)", mwLineOf(fixture, "<page>", 4))},
		{title: "Octets \uFFFD invalides"},
	}
	for i, want := range steps {
		d, err := r.Next(ctx)
		if want.pos != "" {
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("step %d: want RecordError at %s, got doc %q err %v", i, want.pos, d.Title, err)
			}
			if re.File != "broken.xml" || re.Pos != want.pos {
				t.Errorf("step %d: error at %s %s, want broken.xml %s (%v)", i, re.File, re.Pos, want.pos, re)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: want %q, got %v", i, want.title, err)
		}
		if d.Title != want.title {
			t.Errorf("step %d: got %q, want %q", i, d.Title, want.title)
		}
	}
	if _, err := r.Next(ctx); err != io.EOF {
		t.Fatalf("want io.EOF at the end, got %v", err)
	}
	st := r.Stats()
	if st.Documents != 3 || st.Bad != 2 || st.Repaired != 1 || st.Skipped[SkipRedirect] != 1 ||
		st.Skipped[SkipNamespace] != 1 || st.Skipped[SkipEmpty] != 1 {
		t.Errorf("stats %+v", st)
	}
	if st.BytesRead != int64(len(fixture)) {
		t.Errorf("BytesRead %d, want %d", st.BytesRead, len(fixture))
	}
}

func TestMediaWikiFixtureContent(t *testing.T) {
	r := NewMediaWikiReader(strings.NewReader(mwBrokenFixture), "f.xml", "test")
	d, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Local namespace names from <siteinfo> (Dosiero, Kategorio: Esperanto, not built in) are recognised.
	want := []Section{{Name: "", Text: "Texte gras fin."}}
	if fmt.Sprint(d.Sections) != fmt.Sprint(want) {
		t.Errorf("sections %q, want %q", d.Sections, want)
	}
	if d.URL != "https://fr.wikipedia.org/wiki/Premi%C3%A8re_page" || d.ID != "1" ||
		!d.Date.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("doc %+v", d)
	}
}

func mwEncodeUTF16(s string, bigEndian bool) []byte {
	u := utf16.Encode([]rune(s))
	out := make([]byte, 0, 2+2*len(u))
	if bigEndian {
		out = append(out, 0xFE, 0xFF)
	} else {
		out = append(out, 0xFF, 0xFE)
	}
	for _, v := range u {
		if bigEndian {
			out = append(out, byte(v>>8), byte(v))
		} else {
			out = append(out, byte(v), byte(v>>8))
		}
	}
	return out
}

func TestMediaWikiEncodings(t *testing.T) {
	const xmlText = `<mediawiki><page><title>Ελληνικά 𝄞</title><ns>0</ns><id>9</id>
<revision><text>Κείμενο με [[σύνδεσμο|σύνδεσμο]] 𝄞.</text></revision></page></mediawiki>`
	tests := []struct {
		name string
		in   []byte
	}{
		{"utf-8", []byte(xmlText)},
		{"utf-8 bom", append([]byte{0xEF, 0xBB, 0xBF}, xmlText...)},
		{"utf-16le bom", mwEncodeUTF16(xmlText, false)},
		{"utf-16be bom", mwEncodeUTF16(xmlText, true)},
		{"utf-16le no bom", mwEncodeUTF16(xmlText, false)[2:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewMediaWikiReader(bytes.NewReader(tt.in), "enc.xml", "")
			docs, bad := mwReadAll(t, r)
			if len(bad) > 0 || len(docs) != 1 {
				t.Fatalf("docs %d bad %v", len(docs), bad)
			}
			d := docs[0]
			if d.Title != "Ελληνικά 𝄞" || d.Sections[0].Text != "Κείμενο με σύνδεσμο 𝄞." {
				t.Errorf("got %q %q", d.Title, d.Sections)
			}
			if r.Stats().BytesRead != int64(len(tt.in)) || r.Stats().Repaired != 0 {
				t.Errorf("stats %+v, input %d bytes", r.Stats(), len(tt.in))
			}
		})
	}
	t.Run("utf-16 lone surrogate", func(t *testing.T) {
		in := mwEncodeUTF16(xmlText, false)
		k := bytes.Index(in, []byte{0x34, 0xD8}) // high surrogate of U+1D11E in the title
		in[k+2], in[k+3] = 'x', 0                // break the pair
		r := NewMediaWikiReader(bytes.NewReader(in), "enc.xml", "")
		docs, _ := mwReadAll(t, r)
		if len(docs) != 1 || docs[0].Title != "Ελληνικά \uFFFDx" || r.Stats().Repaired != 1 {
			t.Errorf("docs %+v stats %+v", docs, r.Stats())
		}
	})
}

func TestMediaWikiNotADump(t *testing.T) {
	for _, in := range []string{"", `{"id": 1, "text": "json"}`, "plain text\n"} {
		_, err := NewMediaWikiReader(strings.NewReader(in), "x.json", "").Next(context.Background())
		if err == nil || err == io.EOF || IsRecordError(err) || !strings.Contains(err.Error(), "x.json") {
			t.Errorf("%q: want a fatal error naming the file, got %v", in, err)
		}
	}
	// A dump with a root and no pages is simply empty.
	_, err := NewMediaWikiReader(strings.NewReader("<mediawiki></mediawiki>"), "e.xml", "").Next(context.Background())
	if err != io.EOF {
		t.Errorf("empty dump: got %v, want io.EOF", err)
	}
}

func TestMediaWikiContextAndClose(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewMediaWikiReader(strings.NewReader(mwBrokenFixture), "f.xml", "")
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(context.Background()); err == nil || err == io.EOF {
		t.Errorf("Next after Close: got %v", err)
	}
}

func TestMediaWikiOversizedPage(t *testing.T) {
	big := strings.Repeat("a", DefaultMaxRecordBytes)
	in := "<mediawiki><page><title>Big</title><ns>0</ns><id>1</id><revision><text>" + big +
		"</text></revision></page>\n<page><title>Small</title><ns>0</ns><id>2</id><revision><text>ok</text></revision></page></mediawiki>"
	r := NewMediaWikiReader(strings.NewReader(in), "big.xml", "")
	_, err := r.Next(context.Background())
	if !IsRecordError(err) || !strings.Contains(err.Error(), "page 1 (line 1)") {
		t.Fatalf("want RecordError for page 1, got %v", err)
	}
	d, err := r.Next(context.Background())
	if err != nil || d.Title != "Small" {
		t.Fatalf("after oversized page: %q %v", d.Title, err)
	}
}

func TestEscapeWikiTitle(t *testing.T) {
	tests := map[string]string{
		"Actrius":              "Actrius",
		"An American in Paris": "An_American_in_Paris",
		"AC/DC":                "AC/DC",
		"Who? (song)":          "Who%3F_(song)",
		"C++":                  "C%2B%2B",
		"R&B":                  "R%26B",
		"100% Love":            "100%25_Love",
		"Café":                 "Caf%C3%A9",
		"Joe's: \"best\" #1":   "Joe%27s:_%22best%22_%231",
		"Григориански календар": "%D0%93%D1%80%D0%B8%D0%B3%D0%BE%D1%80%D0%B8%D0%B0%D0%BD%D1%81%D0%BA%D0%B8_%D0%BA%D0%B0%D0%BB%D0%B5%D0%BD%D0%B4%D0%B0%D1%80",
	}
	for in, want := range tests {
		if got := mwEscapeWikiTitle(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func FuzzMediaWikiReader(f *testing.F) {
	f.Add([]byte(mwBrokenFixture))
	f.Add([]byte("<mediawiki><page><title>A</title><ns>0</ns><id>1</id><revision><text>x</text></revision></page>"))
	f.Add([]byte("<page><page></page></page><page"))
	f.Add(mwEncodeUTF16("<mediawiki><page><title>B</title><ns>0</ns><id>2</id></page>", false))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewMediaWikiReader(bytes.NewReader(data), "fuzz.xml", "")
		docs, bad := 0, 0
		for range len(data) + 2 { // each call consumes at least one byte or ends
			d, err := r.Next(context.Background())
			if err != nil {
				if IsRecordError(err) {
					bad++
					continue
				}
				break
			}
			docs++
			if d.Title == "" || d.ID == "" || len(d.Sections) == 0 || !utf8.ValidString(d.Title) {
				t.Fatalf("bad document %+v", d)
			}
			for _, s := range d.Sections {
				if s.Text == "" || !utf8.ValidString(s.Text) {
					t.Fatalf("bad section %+v", s)
				}
			}
		}
		st := r.Stats()
		if st.Documents != docs || st.Bad != bad {
			t.Fatalf("stats %+v, returned %d docs %d errors", st, docs, bad)
		}
	})
}

func BenchmarkMediaWikiReader(b *testing.B) {
	data := mwReadDump(b, mwEnwikiDump)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewMediaWikiReader(bytes.NewReader(data), mwEnwikiDump, "")
		n := 0
		for {
			_, err := r.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 106 {
			b.Fatalf("read %d documents", n)
		}
	}
}

// TestMWSplitTextMatchesXML checks the fast <text> path against encoding/xml on every page of
// the real dump and on hand-made edge cases.
func TestMWSplitTextMatchesXML(t *testing.T) {
	var chunks [][]byte
	data := mwReadDump(t, mwEnwikiDump)
	for {
		s := bytes.Index(data, []byte("<page>"))
		e := bytes.Index(data, []byte("</page>"))
		if s < 0 || e < s {
			break
		}
		chunks = append(chunks, data[s:e+len("</page>")])
		data = data[e+len("</page>"):]
	}
	if len(chunks) != 206 {
		t.Fatalf("%d page chunks", len(chunks))
	}
	for _, c := range []string{
		"a &lt;b&gt; &amp;amp; &quot;q&quot; &apos;s&apos; &#233;&#x263A; line\r\nnext\rlast",
		"", "<![CDATA[x < y]]>", "&nbsp;", "&#0;", "&#xD800;", "&", "a &amp b",
	} {
		chunks = append(chunks, []byte("<page><revision><text xml:space=\"preserve\">"+c+"</text></revision></page>"))
	}
	fast := 0
	for i, c := range chunks {
		var want mwXmlPage
		wantErr := xml.Unmarshal(c, &want)
		meta, text, ok := mwSplitText(c)
		if !ok {
			continue
		}
		fast++
		var got mwXmlPage
		if err := xml.Unmarshal(meta, &got); (err != nil) != (wantErr != nil) {
			t.Fatalf("chunk %d: error %v, encoding/xml says %v", i, err, wantErr)
		}
		if wantErr == nil && text != want.Revisions[0].Text {
			t.Errorf("chunk %d: fast text differs:\n got %q\nwant %q", i, text[:min(len(text), 200)], want.Revisions[0].Text[:min(len(want.Revisions[0].Text), 200)])
		}
	}
	if fast < 206 {
		t.Errorf("fast path taken for %d chunks only", fast)
	}
}

type mwFailingReader struct{ data io.Reader }

func (f *mwFailingReader) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if err == io.EOF {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestMediaWikiIOError(t *testing.T) {
	in := "<mediawiki>\n<page><title>A</title><ns>0</ns><id>1</id><revision><text>a</text></revision></page>\n<page><title>B"
	r := NewMediaWikiReader(&mwFailingReader{strings.NewReader(in)}, "fire.xml", "")
	if d, err := r.Next(context.Background()); err != nil || d.Title != "A" {
		t.Fatalf("first page: %q %v", d.Title, err)
	}
	_, err := r.Next(context.Background())
	if err == nil || IsRecordError(err) || !strings.Contains(err.Error(), "fire.xml: reading line 3: disk on fire") {
		t.Fatalf("want a fatal error naming file and line, got %v", err)
	}
	if _, err2 := r.Next(context.Background()); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("error not sticky: %v", err2)
	}
}

func ExampleNewMediaWikiReader() {
	dump := `<mediawiki>
  <siteinfo><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
  <page><title>Go (game)</title><ns>0</ns><id>7</id>
    <revision><timestamp>2024-01-02T03:04:05Z</timestamp>
      <text>{{Infobox game}}'''Go''' is a [[board game|game]] for two players.</text></revision></page>
  <page><title>Baduk</title><ns>0</ns><id>8</id><redirect title="Go (game)" />
    <revision><text>#REDIRECT [[Go (game)]]</text></revision></page>
</mediawiki>`
	r := NewMediaWikiReader(strings.NewReader(dump), "go.xml", "example")
	for {
		d, err := r.Next(context.Background())
		if err != nil {
			break // io.EOF; a *RecordError would be skippable
		}
		fmt.Println(d.ID, d.Title, d.URL, d.Date.Format("2006-01-02"))
		fmt.Println(d.Sections[0].Text)
	}
	fmt.Println("redirects:", r.Stats().Skipped[SkipRedirect])
	// Output:
	// 7 Go (game) https://en.wikipedia.org/wiki/Go_(game) 2024-01-02
	// Go is a game for two players.
	// redirects: 1
}
