package wikitext

import (
	"bytes"
	"compress/bzip2"
	"encoding/xml"
	"io"
	"os"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// enwikiDump is the shared gensim sample of English Wikipedia (106 main-namespace articles).
const enwikiDump = "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

// articleTexts returns the wikitext of the main-namespace articles of a dump, decoded with
// encoding/xml directly so that the cleaner's benchmark does not depend on the dump reader.
func articleTexts(b *testing.B, dump string) []string {
	f, err := os.Open(sharedtest.Path(b, dump))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		b.Fatalf("decompressing %s: %v", dump, err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "page" {
			continue
		}
		var p struct {
			NS       string    `xml:"ns"`
			Redirect *struct{} `xml:"redirect"`
			Texts    []string  `xml:"revision>text"`
		}
		if err := dec.DecodeElement(&p, &se); err != nil {
			b.Fatal(err)
		}
		if p.NS == "0" && p.Redirect == nil && len(p.Texts) > 0 {
			texts = append(texts, p.Texts[len(p.Texts)-1])
		}
	}
	return texts
}

func BenchmarkClean(b *testing.B) {
	texts := articleTexts(b, enwikiDump)
	if len(texts) != 106 {
		b.Fatalf("%d articles", len(texts))
	}
	var total int64
	for _, s := range texts {
		total += int64(len(s))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			Clean("", s)
		}
	}
}
