package indexer

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// liveLength returns the number of live passages of the index at dir and their total length
// in tokens, computed here: every stored live passage analysed with bleve's English analyzer.
func liveLength(t testing.TB, g *Generation) (docs int, tokens int64) {
	t.Helper()
	a := bleveIdx(g).Mapping().AnalyzerNamed(en.AnalyzerName)
	if a == nil {
		t.Fatal("no English analyzer")
	}
	err := g.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
		docs++
		tokens += int64(len(a.Analyze([]byte(p.Text))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs, tokens
}

// bleveAvgLength returns the average field length bleve's BM25 scorer uses for a query of
// term, read from its score explanation.
func bleveAvgLength(t testing.TB, g *Generation, term string) float64 {
	t.Helper()
	q := query.NewTermQuery(term)
	q.SetField(blevebm25.FieldText)
	sr := bleve.NewSearchRequestOptions(q, 1, 0, true)
	res, err := bleveIdx(g).SearchInContext(statsCtx(g), sr)
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("term %q: %v hits, %v", term, len(res.Hits), err)
	}
	var find func(e *bsearch.Explanation) float64
	find = func(e *bsearch.Explanation) float64 {
		if _, rest, ok := strings.Cut(e.Message, "avgFieldLength="); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
		for _, c := range e.Children {
			if v := find(c); v > 0 {
				return v
			}
		}
		return 0
	}
	return find(res.Hits[0].Expl)
}

// checkAvgLength asserts that the manifest's BM25 statistics are those of the live passages
// and that bleve scores with their mean length (rounded up, as bleve's formula does).
func checkAvgLength(t testing.TB, label, dir string) {
	t.Helper()
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	docs, tokens := liveLength(t, g)
	st := g.Manifest.BM25
	if st == nil || st.Docs != docs || st.Tokens != tokens {
		t.Fatalf("%s: manifest BM25 statistics %+v, live passages: %d docs, %d tokens", label, st, docs, tokens)
	}
	if want := float64(tokens) / float64(docs); st.AvgLength() != want {
		t.Errorf("%s: average length %v, want %v", label, st.AvgLength(), want)
	}
	if got, want := bleveAvgLength(t, g, "cancer"), math.Ceil(float64(tokens)/float64(docs)); got != want {
		t.Errorf("%s: bleve scores with average length %v, want %v", label, got, want)
	}
	if g.Manifest.FormatVersion != FormatVersion {
		t.Errorf("%s: manifest format %d", label, g.Manifest.FormatVersion)
	}
}

// A passage's length is the number of tokens left after stop words are removed, title
// included; the recorded average is exact after a build, an update, a delete and a compaction.
func TestBM25AverageLength(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	small := filepath.Join(t.TempDir(), "small.jsonl")
	// "Cancer" title + ". " + text; the passages are "Cancer. <text>".
	lines := `{"id":"a","title":"Cancer","text":"The cancer of the lung."}
{"id":"b","title":"Cancer","text":"Cancer cells divide and divide and divide without control in many tissues."}
`
	if err := os.WriteFile(small, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: small}}, Build: BuildOptions{Lexical: LexicalBleve}}); err != nil {
		t.Fatal(err)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: "cancer cancer lung" (the, of: stop words) and "cancer cancer cell divid divid
	// divid without control mani tissu" (and, in: stop words).
	got := map[string]int{}
	a := bleveIdx(g).Mapping().AnalyzerNamed(en.AnalyzerName)
	g.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
		got[p.DocID] = len(a.Analyze([]byte(p.Text)))
		return nil
	})
	g.Close()
	if got["a"] != 3 || got["b"] != 10 {
		t.Fatalf("analysed lengths %v, want a:3 b:10 (passage text changed?)", got)
	}
	checkAvgLength(t, "small build", dir)
	if m, _ := manifest.Read(mustCurrent(t, dir)); m.BM25.Tokens != 13 {
		t.Errorf("small build: %d tokens, want 13", m.BM25.Tokens)
	}

	if testing.Short() {
		t.Skip("-short: the small build's average is checked; the SciFact build, update, delete and compaction run without -short")
	}
	older, newer, _, _, _ := scifactRevisions(t)
	sf := t.TempDir()
	steps := []struct {
		name string
		run  func() error
	}{
		{"build", func() error {
			_, err := Build(ctx, Options{Dir: sf, Inputs: []InputSpec{{Path: older}}, Build: BuildOptions{Lexical: LexicalBleve}})
			return err
		}},
		{"update", func() error {
			_, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: sf, Inputs: []InputSpec{{Path: newer}}}, DeleteMissing: true, CompactRatio: -1})
			return err
		}},
		{"delete", func() error {
			_, err := deleteDocs(ctx, UpdateOptions{Options: Options{Dir: sf}, CompactRatio: -1}, []string{"4983"})
			return err
		}},
		{"compact", func() error {
			_, err := compactIndex(ctx, sf, nil)
			return err
		}},
	}
	var prev int64
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkAvgLength(t, s.name, sf)
		m, _ := manifest.Read(mustCurrent(t, sf))
		if s.name != "compact" && m.BM25.Tokens == prev {
			t.Errorf("%s: token count unchanged (%d); the step changed nothing", s.name, prev)
		}
		if s.name == "compact" && (m.BM25.Tokens != prev || m.Tombstones != 0) {
			t.Errorf("compact: %d tokens, before %d; %d tombstones", m.BM25.Tokens, prev, m.Tombstones)
		}
		prev = m.BM25.Tokens
	}
}

// An index of an older format (3: no language recorded; 2: no token count) is refused when
// opened, naming its manifest and the command that rebuilds it, rather than read through
// paths kept for it.
func TestOlderFormatRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds SciFact to rewrite its manifest as older formats")
	}
	ctx := context.Background()
	older, _, _, _, _ := scifactRevisions(t)
	dir := t.TempDir()
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: older}}}); err != nil {
		t.Fatal(err)
	}
	gen := mustCurrent(t, dir)
	m, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{2, 3} {
		m.FormatVersion = v
		if err := manifest.Write(gen, m); err != nil {
			t.Fatal(err)
		}
		g, err := openDir(dir)
		if err == nil {
			g.Close()
			t.Fatalf("format %d index opened", v)
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("format version %d is no longer read", v)) ||
			!strings.Contains(msg, "kairos index --force") || !strings.Contains(msg, manifest.FileName) {
			t.Errorf("format %d: %v", v, err)
		}
	}
}
