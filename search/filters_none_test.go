package search

import (
	"context"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
)

// TestFilterThatMatchesNothing runs one table of filters over every local engine (bleve and
// postings for BM25, the HNSW graph approximate and exact, and hybrid over both) on the FAQ:
// a filter that can match nothing returns nothing, and an empty source list filters nothing.
// WikiChat's language filter for a language the index is not in once came down as an empty
// source list, which every engine read as "any source", so it returned hits.
func TestFilterThatMatchesNothing(t *testing.T) {
	ctx := context.Background()
	build := func(lexical string) *Index {
		dir := t.TempDir()
		_, err := buildAt(ctx, at(dir), indexer.Options{Inputs: []indexer.InputSpec{{Path: shared(t, faq)}},
			EmbedInline: true, Encoder: bow, Build: indexer.BuildOptions{Lexical: lexical}})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Open(t.Context(), at(dir), Options{Encoder: bow})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	type engine struct {
		name  string
		ix    *Index
		mode  Mode
		exact bool
	}
	var engines []engine
	for _, lex := range []string{"bleve", "postings"} {
		ix := build(lex)
		engines = append(engines, engine{lex + " bm25", ix, ModeBM25, false}, engine{lex + " hybrid", ix, ModeHybrid, false})
	}
	engines = append(engines, engine{"hnsw dense", engines[0].ix, ModeDense, false},
		engine{"exact dense", engines[0].ix, ModeDense, true})
	filters := []struct {
		name string
		f    Filters
		none bool // the filter must return no hit; otherwise as many as no filter
	}{
		{"none", Filters{None: true}, true},
		{"none with a source that exists", Filters{None: true, Sources: []string{"faq_covidbert"}}, true},
		{"a source no passage has", Filters{Sources: []string{"no-such-source"}}, true},
		{"empty source list", Filters{Sources: []string{}}, false},
		{"the source every passage has", Filters{Sources: []string{"faq_covidbert"}}, false},
	}
	const query, k = "how does the coronavirus spread", 10
	for _, e := range engines {
		all, err := e.ix.Search(ctx, Request{Text: query, K: k, Mode: e.mode, Exact: e.exact})
		if err != nil || len(all) != k {
			t.Fatalf("%s unfiltered: %d hits, %v", e.name, len(all), err)
		}
		for _, tc := range filters {
			got, err := e.ix.Search(ctx, Request{Text: query, K: k, Mode: e.mode, Exact: e.exact, Filters: tc.f})
			if err != nil {
				t.Fatalf("%s, %s: %v", e.name, tc.name, err)
			}
			want := len(all)
			if tc.none {
				want = 0
			}
			if len(got) != want {
				t.Errorf("%s, filter %s: %d hits, want %d", e.name, tc.name, len(got), want)
			}
		}
	}
}
