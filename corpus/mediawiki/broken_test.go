package mediawiki

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/kairos-rag/kairos/corpus/document"
)

// brokenFixture has a malformed page in the middle, an unterminated page, a page with invalid
// UTF-8 and every kind of skip.
const brokenFixture = `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">
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

// lineOf returns the 1-based line of the n-th occurrence (1-based) of sub in s.
func lineOf(s, sub string, n int) int {
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
	fixture := strings.ReplaceAll(brokenFixture, `\xff`, "\xff")
	fixture = strings.ReplaceAll(fixture, `\xfe`, "\xfe")
	r := NewReader(strings.NewReader(fixture), "broken.xml", "test")
	ctx := context.Background()

	type step struct {
		title string // document expected, or
		pos   string // record error expected at this position
	}
	steps := []step{
		{title: "Première page"},
		{pos: fmt.Sprintf("page 2 (line %d)", lineOf(fixture, "<page>", 2))},
		{title: "Troisième"},
		{pos: fmt.Sprintf("page 4 (line %d)", lineOf(fixture, "<page>", 4))},
		{title: "Octets \uFFFD invalides"},
	}
	for i, want := range steps {
		d, err := r.Next(ctx)
		if want.pos != "" {
			var re *document.RecordError
			if !errors.As(err, &re) {
				t.Fatalf("step %d: want *RecordError at %s, got doc %q err %v", i, want.pos, d.Title, err)
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
	if st.Documents != 3 || st.Bad != 2 || st.Repaired != 1 || st.Skipped[document.SkipRedirect] != 1 ||
		st.Skipped[document.SkipNamespace] != 1 || st.Skipped[document.SkipEmpty] != 1 {
		t.Errorf("stats %+v", st)
	}
	if st.BytesRead != int64(len(fixture)) {
		t.Errorf("BytesRead %d, want %d", st.BytesRead, len(fixture))
	}
}

func TestMediaWikiFixtureContent(t *testing.T) {
	r := NewReader(strings.NewReader(brokenFixture), "f.xml", "test")
	d, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Local namespace names from <siteinfo> (Dosiero, Kategorio: Esperanto, not built in) are recognised.
	want := []document.Section{{Name: "", Text: "Texte gras fin."}}
	if fmt.Sprint(d.Sections) != fmt.Sprint(want) {
		t.Errorf("sections %q, want %q", d.Sections, want)
	}
	if d.URL != "https://fr.wikipedia.org/wiki/Premi%C3%A8re_page" || d.ID != "1" ||
		!d.Date.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("doc %+v", d)
	}
}

func encodeUTF16(s string, bigEndian bool) []byte {
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
		{"utf-16le bom", encodeUTF16(xmlText, false)},
		{"utf-16be bom", encodeUTF16(xmlText, true)},
		{"utf-16le no bom", encodeUTF16(xmlText, false)[2:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tt.in), "enc.xml", "")
			docs, bad := readAll(t, r)
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
		in := encodeUTF16(xmlText, false)
		k := bytes.Index(in, []byte{0x34, 0xD8}) // high surrogate of U+1D11E in the title
		in[k+2], in[k+3] = 'x', 0                // break the pair
		r := NewReader(bytes.NewReader(in), "enc.xml", "")
		docs, _ := readAll(t, r)
		if len(docs) != 1 || docs[0].Title != "Ελληνικά \uFFFDx" || r.Stats().Repaired != 1 {
			t.Errorf("docs %+v stats %+v", docs, r.Stats())
		}
	})
}

func TestMediaWikiNotADump(t *testing.T) {
	for _, in := range []string{"", `{"id": 1, "text": "json"}`, "plain text\n"} {
		_, err := NewReader(strings.NewReader(in), "x.json", "").Next(context.Background())
		if err == nil || err == io.EOF || document.IsRecordError(err) || !strings.Contains(err.Error(), "x.json") {
			t.Errorf("%q: want a fatal error naming the file, got %v", in, err)
		}
	}
	// A dump with a root and no pages is simply empty.
	_, err := NewReader(strings.NewReader("<mediawiki></mediawiki>"), "e.xml", "").Next(context.Background())
	if err != io.EOF {
		t.Errorf("empty dump: got %v, want io.EOF", err)
	}
}

// A malformed <siteinfo> is a fatal error naming the file and its line: read past, the dump's
// language, URLs and namespace names would silently be English Wikipedia's. Both roads to the
// first page (a page, or the end of a dump without pages) check it.
func TestMediaWikiMalformedSiteinfo(t *testing.T) {
	const head = "<mediawiki>\n  <siteinfo>\n    <dbname>dewiki</dbname>\n"
	const page = "  <page><title>Berlin</title><ns>0</ns><id>1</id><revision><text>Berlin ist eine Stadt.</text></revision></page>\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"namespace key not a number", head + `    <namespaces><namespace key="x1">Diskussion</namespace></namespaces>` + "\n  </siteinfo>\n" + page + "</mediawiki>\n", `de.xml: <siteinfo> (line 2): strconv.ParseInt: parsing "x1"`},
		{"mismatched tag", head + "    <base>https://de.wikipedia.org/wiki/X</bas>\n  </siteinfo>\n" + page + "</mediawiki>\n", "de.xml: <siteinfo> (line 2): XML syntax error on line 4"},
		{"no pages", head + "    <base>https://de.wikipedia.org/wiki/X</bas>\n  </siteinfo>\n</mediawiki>\n", "de.xml: <siteinfo> (line 2): XML syntax error on line 4"},
	} {
		_, err := NewReader(strings.NewReader(tc.in), "de.xml", "").Next(context.Background())
		if err == nil || document.IsRecordError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a fatal error containing %q", tc.name, err, tc.want)
		}
	}
	// The same dump with a well-formed siteinfo reads as German.
	ok := head + "    <base>https://de.wikipedia.org/wiki/Wikipedia:Hauptseite</base>\n  </siteinfo>\n" + page + "</mediawiki>\n"
	d, err := NewReader(strings.NewReader(ok), "de.xml", "").Next(context.Background())
	if err != nil || !strings.HasPrefix(d.URL, "https://de.wikipedia.org/wiki/") {
		t.Errorf("well-formed siteinfo: %v, URL %q", err, d.URL)
	}
}

// An XML error in a page names the file's line: it named a line counted within the page,
// after the page's text had been cut out of it.
func TestMediaWikiXMLErrorLine(t *testing.T) {
	const dump = "<mediawiki>\n  <siteinfo><dbname>enwiki</dbname></siteinfo>\n  <page>\n    <title>Alpha</title>\n    <ns>0</ns>\n" +
		"    <id>1</id>\n    <revision>\n      <timestamp>2020-01-01T00:00:00Z</timestamp>\n      <text>Alpha text\nline two\nline three\n" +
		"line four</text>\n      <comment>bad &nbsp; entity</comment>\n    </revision>\n  </page>\n</mediawiki>\n"
	for _, workers := range []int{1, 2} {
		_, err := New(strings.NewReader(dump), Options{File: "w.xml", Workers: workers}).Next(context.Background())
		if !document.IsRecordError(err) || !strings.Contains(err.Error(), "w.xml: page 1 (line 3): decoding page: XML syntax error on line 13:") {
			t.Errorf("workers %d: %v; want the error on line 13 of the file", workers, err)
		}
	}
}

func TestMediaWikiContextAndClose(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewReader(strings.NewReader(brokenFixture), "f.xml", "")
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
	big := strings.Repeat("a", document.DefaultMaxRecordBytes)
	in := "<mediawiki><page><title>Big</title><ns>0</ns><id>1</id><revision><text>" + big +
		"</text></revision></page>\n<page><title>Small</title><ns>0</ns><id>2</id><revision><text>ok</text></revision></page></mediawiki>"
	r := NewReader(strings.NewReader(in), "big.xml", "")
	_, err := r.Next(context.Background())
	if !document.IsRecordError(err) || !strings.Contains(err.Error(), "page 1 (line 1)") {
		t.Fatalf("want *RecordError for page 1, got %v", err)
	}
	d, err := r.Next(context.Background())
	if err != nil || d.Title != "Small" {
		t.Fatalf("after oversized page: %q %v", d.Title, err)
	}
}

type failingReader struct{ data io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if err == io.EOF {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestMediaWikiIOError(t *testing.T) {
	in := "<mediawiki>\n<page><title>A</title><ns>0</ns><id>1</id><revision><text>a</text></revision></page>\n<page><title>B"
	r := NewReader(&failingReader{strings.NewReader(in)}, "fire.xml", "")
	if d, err := r.Next(context.Background()); err != nil || d.Title != "A" {
		t.Fatalf("first page: %q %v", d.Title, err)
	}
	_, err := r.Next(context.Background())
	if err == nil || document.IsRecordError(err) || !strings.Contains(err.Error(), "fire.xml: reading line 3: disk on fire") {
		t.Fatalf("want a fatal error naming file and line, got %v", err)
	}
	if _, err2 := r.Next(context.Background()); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("error not sticky: %v", err2)
	}
}

// TestMediaWikiTimestamp fails a page whose <timestamp> is malformed, naming the page: it was
// read as undated without a word. A page without a timestamp stays undated.
func TestMediaWikiTimestamp(t *testing.T) {
	tests := []struct {
		name, revision string
		date           time.Time
		err            string // the record error, "" for a document
	}{
		{"RFC 3339", "<timestamp>2020-01-02T03:04:05Z</timestamp>", time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), ""},
		{"spaces", "<timestamp> 2020-01-02T03:04:05Z\n</timestamp>", time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), ""},
		{"absent", "", time.Time{}, ""},
		{"empty", "<timestamp></timestamp>", time.Time{}, ""},
		{"date only", "<timestamp>2020-01-02</timestamp>", time.Time{}, `t.xml: page 1 (line 2): page "P": bad <timestamp> "2020-01-02": want RFC 3339, e.g. 2006-01-02T15:04:05Z`},
		{"month 13", "<timestamp>2020-13-02T03:04:05Z</timestamp>", time.Time{}, `t.xml: page 1 (line 2): page "P": bad <timestamp> "2020-13-02T03:04:05Z": want RFC 3339, e.g. 2006-01-02T15:04:05Z`},
		{"words", "<timestamp>yesterday</timestamp>", time.Time{}, `t.xml: page 1 (line 2): page "P": bad <timestamp> "yesterday": want RFC 3339, e.g. 2006-01-02T15:04:05Z`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dump := "<mediawiki>\n<page><title>P</title><ns>0</ns><id>1</id><revision>" + tt.revision +
				"<text>Some text.</text></revision></page>\n</mediawiki>\n"
			r := NewReader(strings.NewReader(dump), "t.xml", "test")
			d, err := r.Next(context.Background())
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.err == "" && !d.Date.Equal(tt.date):
				t.Errorf("date %v, want %v", d.Date, tt.date)
			case tt.err != "" && (!document.IsRecordError(err) || err.Error() != tt.err):
				t.Errorf("error %v (document %q)\nwant %s", err, d.Title, tt.err)
			}
			if _, err := r.Next(context.Background()); err != io.EOF {
				t.Errorf("then %v, want io.EOF", err)
			}
		})
	}
}
