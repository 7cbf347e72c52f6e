package synthcorpus

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/multistream"
)

// TestMediaWikiRoundTrip: a small synthetic dump, written as Wikipedia's multistream bzip2
// with its index, reads back through the indexer's reader and splitter as exactly the pages
// and passages the generator drew, although its wikitext is full of markup to clean. The
// second model draws mostly symbols ("±") and one-word bodies, which the cleaner drops as
// markup residue unless the generator gives each paragraph a word.
func TestMediaWikiRoundTrip(t *testing.T) {
	symbols := &Model{Words: []string{"±", "–", "%)", "alpha", "beta", "gamma"}, Counts: []int64{40, 30, 20, 5, 5, 5},
		TailMass: 0.01, ZipfS: 1, PassageWords: []int64{0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		TitleWords: []int64{0, 1}, DocPassages: []int64{0, 0, 0, 1}}
	t.Run("scifact", func(t *testing.T) { roundTrip(t, sciFactModel(t), 700) })
	t.Run("symbols", func(t *testing.T) { roundTrip(t, symbols, 400) })
}

// TestMediaWikiHanWords: a vocabulary with Han words, which the splitter weighs at more than
// one word, still gives pages that index as the passages the generator counted (Han words
// were accepted in titles and headings, and a section split in two); a vocabulary of Han
// words alone ends (the redraws of a word had no bound).
func TestMediaWikiHanWords(t *testing.T) {
	roundTrip(t, hanModel(t, 2), 300)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := GenerateMediaWiki(ctx, io.Discard, hanModel(t, 1), Options{Passages: 50, Seed: 3})
	if err != nil || st.Passages != 50 {
		t.Fatalf("Han words only: %+v, %v", st, err)
	}
}

func roundTrip(t *testing.T, m *Model, passages int) {
	type page struct {
		title    string
		passages []string
	}
	var want []page
	var xml bytes.Buffer
	st, err := generateMediaWiki(context.Background(), &xml, m, Options{Passages: passages, Seed: 3}, func(title string, ps []string) {
		want = append(want, page{title, ps})
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Passages != passages || st.Documents != len(want) || st.Documents < 20 {
		t.Fatalf("stats %+v for %d pages, want %d passages in many pages", st, len(want), passages)
	}
	for _, markup := range []string{"== ", "[[", "|", "{{cite web", "&lt;ref name=", "{| class=", "[[Category:", "&lt;nowiki&gt;"} {
		if !bytes.Contains(xml.Bytes(), []byte(markup)) {
			t.Errorf("the wikitext holds no %q: the cleaner would have nothing of it to do", markup)
		}
	}

	path := filepath.Join(t.TempDir(), "synthwiki-multistream.xml.bz2")
	if err := multistream.Create(context.Background(), path, bytes.NewReader(xml.Bytes()), multistream.WriteOptions{PagesPerStream: 10}); err != nil {
		t.Fatal(err)
	}
	offsets, err := multistream.ReadIndex(context.Background(), multistream.IndexPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if n := (len(want) + 9) / 10; len(offsets) != n {
		t.Errorf("index: %d streams of pages, want %d", len(offsets), n)
	}

	r, err := corpus.Open(context.Background(), path, corpus.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	split, err := corpus.NewSplitter(corpus.SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []page
	words := int64(0)
	for {
		doc, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := page{title: doc.Title}
		for _, ps := range split.Split(doc) {
			p.passages = append(p.passages, ps.Text)
			words += int64(len(strings.Fields(ps.Text)))
		}
		got = append(got, p)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d pages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].title != want[i].title || !slices.Equal(got[i].passages, want[i].passages) {
			t.Fatalf("page %d:\n got %q\n%q\nwant %q\n%q", i+1, got[i].title, got[i].passages, want[i].title, want[i].passages)
		}
	}
	if words != st.Words {
		t.Errorf("%d words indexed, stats say %d", words, st.Words)
	}
	if rs := r.Stats(); rs.Documents != len(want) || rs.Bad != 0 || len(rs.Skipped) != 0 {
		t.Errorf("reader stats %+v", rs)
	}
}
