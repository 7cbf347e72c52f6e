package postingsbm25

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
)

// TestSplitSearchEqualsSingle searches a generation built by the engine (SciFact, added in
// two generations so that it has two segments, with every seventh passage of the first
// deleted) with searchers that split every query into ranges on several goroutines, and
// with one that never splits: for SciFact queries at several k, with and without a filter,
// the hits must be the same keys in the same order with the same score bits.
func TestSplitSearchEqualsSingle(t *testing.T) {
	ctx := context.Background()
	ps := sciFactPassages(t)
	held := map[uint32]*corpus.Passage{}
	for i := range ps {
		held[uint32(i)] = &ps[i]
	}
	var del []uint32
	for k := uint32(0); k < 3000; k += 7 {
		del = append(del, k)
	}
	root := t.TempDir()
	g1 := backend.Gen{Name: "g1", Dir: filepath.Join(root, "g1")}
	g2 := backend.Gen{Name: "g2", Dir: filepath.Join(root, "g2")}
	c1 := write(t, g1.Dir, nil, op{add: ps[:3000]}, held)
	c2 := write(t, g2.Dir, &g1, op{add: ps[3000:], first: 3000, del: del}, held)
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4},
		Stats: backend.CollectionStats{Docs: len(ps) - len(del), Tokens: c1.TokensAdded + c2.TokensAdded}}
	r, err := Open(ctx, g2.Dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.segs) < 2 || r.deleted.Len() != len(del) {
		t.Fatalf("generation has %d segments and %d deleted passages, want two or more and %d", len(r.segs), r.deleted.Len(), len(del))
	}
	an, err := langanalysis.New("en")
	if err != nil {
		t.Fatal(err)
	}
	var queries [][]string
	nq := 300
	if raceEnabled {
		nq = 60 // the goroutines' safety needs fewer queries than their results' equality
	}
	for _, rec := range sciFact(t, "queries.jsonl", nq) {
		var terms []string
		for _, tok := range an.Analyze([]byte(rec["text"].(string))) {
			terms = append(terms, string(tok.Term))
		}
		queries = append(queries, distinct(terms))
	}
	// The filter a Keeper applies, as a key predicate: a third of the passages pass.
	third := func(k uint32) bool { return k%3 == 1 }
	type probe struct {
		q    postings.Query
		want []postings.Hit
	}
	single, err := postings.NewSearcher(r.segs, postings.SearcherOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var probes []probe
	hits := 0
	for _, k := range []int{1, 10, 30, 100, 1000} {
		for qi, terms := range queries {
			q := r.postingsQuery(backend.LexicalQuery{Terms: terms, N: k})
			if qi%2 == 1 {
				q.Allow = third
			}
			want, err := single.Search(ctx, q, r.sc)
			if err != nil {
				t.Fatal(err)
			}
			hits += len(want)
			probes = append(probes, probe{q, want})
		}
	}
	if hits < len(probes) {
		t.Fatalf("%d hits for %d searches: the comparison compares almost nothing", hits, len(probes))
	}
	for _, opts := range []postings.SearcherOptions{
		{Workers: 2, MinRange: 1, MinSplitPostings: 1},
		{Workers: 3, MinRange: 400, MinSplitPostings: 1},
		{Workers: 8, MinRange: 1, MinSplitPostings: 1},
	} {
		t.Run(fmt.Sprintf("workers %d range %d", opts.Workers, opts.MinRange), func(t *testing.T) {
			x, err := postings.NewSearcher(r.segs, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range probes {
				got, err := x.Search(ctx, pr.q, r.sc)
				if err != nil {
					t.Fatal(err)
				}
				same := len(got) == len(pr.want)
				for i := 0; same && i < len(got); i++ {
					same = got[i].Key == pr.want[i].Key && math.Float64bits(got[i].Score) == math.Float64bits(pr.want[i].Score)
				}
				if !same {
					t.Fatalf("query %q k %d filtered %v:\nsplit  %v\nsingle %v", pr.q.Terms, pr.q.K, pr.q.Allow != nil, got, pr.want)
				}
			}
			// One query at a time, the budget is always free: every query split.
			if st := x.Stats(); st.Queries != uint64(len(probes)) || st.Split != st.Queries {
				t.Fatalf("stats %+v: want all %d queries split", st, len(probes))
			}
		})
	}
	t.Logf("%d searches over %d segments, %d hits each way", len(probes), len(r.segs), hits)
}
