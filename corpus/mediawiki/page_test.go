package mediawiki

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/document"
)

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
		if got := escapeTitle(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func FuzzMediaWikiReader(f *testing.F) {
	f.Add([]byte(brokenFixture))
	f.Add([]byte("<mediawiki><page><title>A</title><ns>0</ns><id>1</id><revision><text>x</text></revision></page>"))
	f.Add([]byte("<page><page></page></page><page"))
	f.Add(encodeUTF16("<mediawiki><page><title>B</title><ns>0</ns><id>2</id></page>", false))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz.xml", "")
		docs, bad := 0, 0
		for range len(data) + 2 { // each call consumes at least one byte or ends
			d, err := r.Next(context.Background())
			if err != nil {
				if document.IsRecordError(err) {
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
	data := readDump(b, enwikiDump)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), enwikiDump, "")
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

// TestSplitTextMatchesXML checks the fast <text> path against encoding/xml on every page of
// the real dump and on hand-made edge cases.
func TestSplitTextMatchesXML(t *testing.T) {
	var chunks [][]byte
	data := readDump(t, enwikiDump)
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
		var want xmlPage
		wantErr := xml.Unmarshal(c, &want)
		meta, text, ok := splitText(c)
		if !ok {
			continue
		}
		fast++
		var got xmlPage
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

func ExampleNewReader() {
	dump := `<mediawiki>
  <siteinfo><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
  <page><title>Go (game)</title><ns>0</ns><id>7</id>
    <revision><timestamp>2024-01-02T03:04:05Z</timestamp>
      <text>{{Infobox game}}'''Go''' is a [[board game|game]] for two players.</text></revision></page>
  <page><title>Baduk</title><ns>0</ns><id>8</id><redirect title="Go (game)" />
    <revision><text>#REDIRECT [[Go (game)]]</text></revision></page>
</mediawiki>`
	r := NewReader(strings.NewReader(dump), "go.xml", "example")
	for {
		d, err := r.Next(context.Background())
		if err != nil {
			break // io.EOF; a *RecordError would be skippable
		}
		fmt.Println(d.ID, d.Title, d.URL, d.Date.Format("2006-01-02"))
		fmt.Println(d.Sections[0].Text)
	}
	fmt.Println("redirects:", r.Stats().Skipped[document.SkipRedirect])
	// Output:
	// 7 Go (game) https://en.wikipedia.org/wiki/Go_(game) 2024-01-02
	// Go is a game for two players.
	// redirects: 1
}
