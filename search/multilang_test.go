package search

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// The German and French fixtures (testdata/multilang): each plural meets its singular query
// only through its own language's stemmer (German "Häuser" and "Haus" are both "haus", French
// makes them "häus" and "hau"; French "chevaux" and "cheval" are both "cheval", German keeps
// them apart).
var (
	dewiki = filepath.Join("testdata", "multilang", "dewiki.xml")
	frwiki = filepath.Join("testdata", "multilang", "frwiki.xml")
)

// multilangQueries are inflected forms, the title of the one page each must find first, and
// that page's language.
var multilangQueries = []struct{ text, title, lang string }{
	{"Haus", "Altstadt", "de"},
	{"Baum", "Stadtwald", "de"},
	{"cheval", "Haras", "fr"},
	{"journal", "Presse", "fr"},
}

// multilangEngine builds the two fixtures into one index at dir with the given lexical engine
// (and the bag-of-words encoder, for the dense searches' filters) and opens it.
func multilangEngine(t *testing.T, dir, lexical, language string, encoder bool) *Index {
	t.Helper()
	opts := indexer.Options{Inputs: []indexer.InputSpec{{Path: dewiki}, {Path: frwiki}},
		Build: indexer.BuildOptions{Lexical: lexical, Language: language}}
	sopts := Options{}
	if encoder {
		opts.Encoder, opts.EmbedInline, sopts.Encoder = bow, true, bow
	}
	if _, err := buildAt(context.Background(), at(dir), opts); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(t.Context(), at(dir), sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// TestMultilingualIndex: a German and a French dump make one index on postings and on bleve
// (and on Qdrant: TestMultilingualQdrant); each inflected query finds its page through its own
// language's analysis, which an index analysed in one language does not; the language filter
// separates the languages in BM25, dense and hybrid searches; and the two engines score alike.
func TestMultilingualIndex(t *testing.T) {
	engines := map[string]*Index{}
	for _, lex := range []string{indexer.LexicalPostings, indexer.LexicalBleve} {
		engines[lex] = multilangEngine(t, filepath.Join(t.TempDir(), "idx"), lex, "", true)
	}
	for name, ix := range engines {
		t.Run(name, func(t *testing.T) { checkMultilingual(t, ix, true) })
	}
	assertSameHits(t, engines[indexer.LexicalPostings], engines[indexer.LexicalBleve], "bleve")

	// The same inputs analysed as one language: the other language's plurals are out of reach.
	for _, tc := range []struct{ forced, lost string }{{"fr", "Haus"}, {"de", "cheval"}} {
		ix := multilangEngine(t, filepath.Join(t.TempDir(), "idx"), indexer.LexicalPostings, tc.forced, false)
		if ix.Manifest().Multilingual() {
			t.Fatalf("--language %s built a multilingual index", tc.forced)
		}
		for _, q := range multilangQueries {
			hits, err := ix.Search(context.Background(), Request{Text: q.text, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			found := len(hits) > 0 && hits[0].Title == q.title
			if want := q.lang == tc.forced; found != want {
				t.Errorf("index analysed as %s: %q finds %s first: %v, want %v", tc.forced, q.text, q.title, found, want)
			}
		}
	}
}

// checkMultilingual asserts what every engine must do with the German and French index.
func checkMultilingual(t *testing.T, ix *Index, dense bool) {
	ctx := context.Background()
	m := ix.Manifest()
	if !m.Multilingual() || m.Options.Analyzer != langanalysis.Multilingual {
		t.Fatalf("manifest analyzer %q, not multilingual", m.Options.Analyzer)
	}
	if got := ix.Stats().Languages; !maps.Equal(got, map[string]int{"de": 3, "fr": 3}) {
		t.Errorf("stats languages %v, want de 3 and fr 3", got)
	}
	// Page 1 of each dump is its own document, not one replacing the other.
	for _, id := range []string{"de:1", "fr:1"} {
		if p, err := ix.Passage(ctx, id+"#0"); err != nil || p.Language != id[:2] {
			t.Errorf("passage %s#0: language %q, %v", id, p.Language, err)
		}
	}
	for _, q := range multilangQueries {
		other := map[string]string{"de": "fr", "fr": "de"}[q.lang]
		for _, tc := range []struct {
			name string
			f    Filters
			none bool
		}{
			{"no filter", Filters{}, false},
			{"its language", Filters{Languages: []string{q.lang}}, false},
			{"its language with a region", Filters{Languages: []string{q.lang + "-CH"}}, false},
			{"not the other", Filters{ExcludeLanguages: []string{other}}, false},
			{"the other language", Filters{Languages: []string{other}}, true},
			{"not its language", Filters{ExcludeLanguages: []string{q.lang}}, true},
			{"a language the index is not in", Filters{Languages: []string{"it"}}, true},
		} {
			hits, err := ix.Search(ctx, Request{Text: q.text, K: 10, Filters: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			if tc.none {
				if len(hits) != 0 {
					t.Errorf("%q, %s: %d hits (%s first), want none", q.text, tc.name, len(hits), hits[0].Title)
				}
				continue
			}
			if len(hits) != 1 || hits[0].Title != q.title || hits[0].Language != q.lang {
				t.Errorf("%q, %s: %d hits, want only %s (%s): %v", q.text, tc.name, len(hits), q.title, q.lang, titles(hits))
			}
		}
	}
	// Paris is in one page of each language: the filter picks one, in every mode.
	modes := []Mode{ModeBM25}
	if dense {
		modes = append(modes, ModeDense, ModeHybrid)
	}
	for _, mode := range modes {
		for _, tc := range []struct {
			f    Filters
			want []string
		}{
			{Filters{}, []string{"de", "fr"}},
			{Filters{Languages: []string{"de"}}, []string{"de"}},
			{Filters{Languages: []string{"fr", "de"}}, []string{"de", "fr"}},
			{Filters{ExcludeLanguages: []string{"de"}}, []string{"fr"}},
			{Filters{Languages: []string{"fr"}, Sources: []string{"dewiki.xml"}}, nil},
		} {
			hits, err := ix.Search(ctx, Request{Text: "Paris", K: 6, Mode: mode, Filters: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			langs := map[string]bool{}
			for _, h := range hits {
				langs[h.Language] = true
			}
			if got := slices.Sorted(maps.Keys(langs)); !slices.Equal(got, tc.want) {
				t.Errorf("%s %q, filter %+v: languages %v, want %v", mode, "Paris", tc.f, got, tc.want)
			}
			if mode == ModeBM25 && len(hits) != len(tc.want) {
				t.Errorf("bm25 %q, filter %+v: %v, want one page per language", "Paris", tc.f, titles(hits))
			}
		}
	}
}

// assertSameHits: b ranks and scores the queries as a does (BM25 statistics exact per
// analysed term on both).
func assertSameHits(t *testing.T, a, b *Index, name string) {
	t.Helper()
	for _, text := range []string{"Haus", "cheval", "Paris", "Paris Häuser journaux"} {
		for _, f := range []Filters{{}, {Languages: []string{"fr"}}} {
			ha, err := a.Search(context.Background(), Request{Text: text, K: 10, Filters: f})
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.Search(context.Background(), Request{Text: text, K: 10, Filters: f})
			if err != nil {
				t.Fatal(err)
			}
			if ok, _, _ := sameRanking(ha, hb); !ok || len(ha) == 0 && len(f.Languages) == 0 {
				t.Errorf("%q %+v: postings %v, %s %v", text, f, scored(ha), name, scored(hb))
			}
		}
	}
}

func titles(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Title + "/" + h.Language
	}
	return out
}

func scored(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID + "=" + strconv.FormatFloat(h.Score, 'g', -1, 64)
	}
	return out
}

// TestMultilingualQdrant: the German and French index on a Qdrant cluster behaves as on the
// local engines, and scores as postings does.
func TestMultilingualQdrant(t *testing.T) {
	cluster := qdranttest.Start(t, 1)
	ix := multilangEngine(t, "qdrant://"+cluster.Peers[0].GRPCAddr()+"/multilang", "", "", true)
	checkMultilingual(t, ix, true)
	local := multilangEngine(t, filepath.Join(t.TempDir(), "idx"), indexer.LexicalPostings, "", false)
	assertSameHits(t, local, ix, "qdrant")
}
