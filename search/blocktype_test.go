package search

import (
	"context"
	"maps"
	"slices"
	"sort"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// blocksFixture is two Wikimedia Enterprise articles whose HTML has prose, an infobox, two
// tables and a navbox (dropped): every passage mentions "squirrel".
const blocksFixture = "testdata/enterprise_blocks.ndjson"

// TestBlockTypeFilter runs one table of block type filters over every engine (bleve and
// postings for BM25, the HNSW graph approximate and exact, hybrid, and Qdrant's BM25, dense
// and hybrid when the qdrant binary is there) on an index of blocksFixture: the hits carry the
// block type their passage was cut from, and a filter returns exactly the passages of the
// types it names, with the scores they have unfiltered.
func TestBlockTypeFilter(t *testing.T) {
	ctx := context.Background()
	type engine struct {
		name  string
		ix    *Index
		mode  Mode
		exact bool
	}
	open := func(t *testing.T, loc string) *Index {
		t.Helper()
		ix, err := Open(t.Context(), at(loc), Options{Encoder: bow})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	local := func(lexical string) *Index {
		dir := t.TempDir()
		_, err := buildAt(ctx, at(dir), indexer.Options{Inputs: []indexer.InputSpec{{Path: blocksFixture}},
			EmbedInline: true, Encoder: bow, Build: indexer.BuildOptions{Lexical: lexical}})
		if err != nil {
			t.Fatal(err)
		}
		return open(t, dir)
	}
	var engines []engine
	for _, lex := range []string{"bleve", "postings"} {
		ix := local(lex)
		engines = append(engines, engine{lex + " bm25", ix, ModeBM25, false}, engine{lex + " hybrid", ix, ModeHybrid, false},
			engine{lex + " hnsw dense", ix, ModeDense, false}, engine{lex + " exact dense", ix, ModeDense, true})
	}

	// The passages by block type, as the store has them: the fixture's infobox and two tables
	// are passages of their own, the navbox is not one.
	byType := map[string][]string{}
	err := engines[0].ix.gen.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
		byType[p.Block()] = append(byType[p.Block()], p.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(byType[corpus.BlockInfobox]) != 1 || len(byType[corpus.BlockTable]) != 2 || len(byType[corpus.BlockText]) < 5 || len(byType) != 3 {
		t.Fatalf("passages by block type: %v", byType)
	}
	total := 0
	for _, ids := range byType {
		total += len(ids)
	}

	filters := [][]string{
		nil, {corpus.BlockText}, {corpus.BlockTable}, {corpus.BlockInfobox},
		{corpus.BlockTable, corpus.BlockInfobox}, {corpus.BlockText, corpus.BlockInfobox},
		{corpus.BlockText, corpus.BlockTable, corpus.BlockInfobox},
	}
	run := func(t *testing.T, engines []engine) {
		for _, e := range engines {
			all, err := e.ix.Search(ctx, Request{Text: "squirrel", K: 50, Mode: e.mode, Exact: e.exact})
			if err != nil || len(all) != total {
				t.Fatalf("%s unfiltered: %d hits of %d passages, %v", e.name, len(all), total, err)
			}
			// Document evidence adds what a passage's document's other candidates score, which
			// a filter changes: compare the passage's own score.
			own := func(h Hit) float64 { return h.Score - h.Scores[ScoreDocEvidence] }
			scores := map[string]float64{}
			for _, h := range all {
				scores[h.ID] = own(h)
			}
			for _, types := range filters {
				got, err := e.ix.Search(ctx, Request{Text: "squirrel", K: 50, Mode: e.mode, Exact: e.exact,
					Filters: Filters{BlockTypes: types}})
				if err != nil {
					t.Fatalf("%s, %v: %v", e.name, types, err)
				}
				var want []string
				for typ, ids := range byType {
					if len(types) == 0 || slices.Contains(types, typ) {
						want = append(want, ids...)
					}
				}
				var ids []string
				for _, h := range got {
					ids = append(ids, h.ID)
					if len(types) > 0 && !slices.Contains(types, h.Block()) {
						t.Errorf("%s, %v: hit %s is a %s", e.name, types, h.ID, h.Block())
					}
					// Filters restrict, they do not score (fused scores depend on the
					// ranks, which a filter changes).
					if e.mode != ModeHybrid && own(h) != scores[h.ID] {
						t.Errorf("%s, %v: %s scores %v, %v unfiltered", e.name, types, h.ID, own(h), scores[h.ID])
					}
				}
				sort.Strings(ids)
				sort.Strings(want)
				if !slices.Equal(ids, want) {
					t.Errorf("%s, filter %v: hits %v\nwant %v", e.name, types, ids, want)
				}
			}
		}
	}
	run(t, engines)

	t.Run("qdrant", func(t *testing.T) {
		c := qdranttest.Start(t, 1)
		loc := "qdrant://" + c.Peers[0].GRPCAddr() + "/blocks?rest=" + c.Peers[0].HTTPAddr()
		if _, err := buildAt(ctx, at(loc), indexer.Options{Inputs: []indexer.InputSpec{{Path: blocksFixture}}, EmbedInline: true, Encoder: bow}); err != nil {
			t.Fatal(err)
		}
		ix := open(t, loc)
		got := map[string][]string{}
		err := ix.gen.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
			got[p.Block()] = append(got[p.Block()], p.ID)
			return nil
		})
		if err != nil || !maps.EqualFunc(got, byType, slices.Equal) {
			t.Fatalf("Qdrant's passages by block type %v (%v), the local store's %v", got, err, byType)
		}
		run(t, []engine{{"qdrant bm25", ix, ModeBM25, false}, {"qdrant dense", ix, ModeDense, false}, {"qdrant hybrid", ix, ModeHybrid, false}})
	})
}
