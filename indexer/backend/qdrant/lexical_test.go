package qdrant

import (
	"context"
	"math"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

func newEngine(t testing.TB, c *qdranttest.Cluster, index string, o Options) *Engine {
	t.Helper()
	o.Hosts, o.Index, o.BM25 = c.Addrs(), index, testParams
	if o.REST == "" {
		o.REST = c.Peers[0].HTTPAddr()
	}
	if o.Dim == 0 {
		o.Dim = 8
	}
	e, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestBM25MatchesBleve: SciFact in Qdrant ranks every judged query's top 10 as the local
// bleve engine does, same keys in the same order, scores within 1e-6 relative, on one peer
// (all 809 judged queries) and on three (6 shards, replication 2; every 3rd query, to keep
// the suite short), each query under one of three filters in turn.
func TestBM25MatchesBleve(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: SciFact in Qdrant and in bleve, compared query by query")
	}
	ps := sciFact(t)
	queries := sciFactQueries(t)
	stride := 1
	if raceEnabled {
		ps, stride = ps[:3000], 5
	}
	local, sc := localBM25(t, ps)
	filters := []backend.Filter{{}, {Sources: []string{"wiki"}}, {DateFrom: day("2005-01-01"), DateTo: day("2012-06-30"), Sources: []string{"pubmed", "news"}}}
	for _, tc := range []struct {
		name   string
		peers  int
		stride int
	}{{"1 peer", 1, stride}, {"3 peers", 3, 3 * stride}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := qdranttest.Start(t, tc.peers)
			e := newEngine(t, c, "scifact", Options{})
			gen := backend.Gen{Name: "g-000001"}
			counts := writeLexical(t, e.Lexical(), gen, ps)
			if counts.Docs != sc.Stats.Docs || counts.TokensAdded != sc.Stats.Tokens {
				t.Fatalf("counts %+v, local %+v", counts, sc.Stats)
			}
			r, err := e.Lexical().Open(ctx, gen, sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			compared, nonEmpty := 0, 0
			for qi := 0; qi < len(queries); qi += tc.stride {
				terms := queries[qi]
				f := filters[qi%len(filters)]
				want, err := local.Search(ctx, backend.LexicalQuery{Terms: terms, N: 10, Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				got, err := r.Search(ctx, backend.LexicalQuery{Terms: terms, N: 10, Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				compared++
				if len(want) > 0 {
					nonEmpty++
				}
				if len(got) != len(want) {
					t.Errorf("query %d %v filter %+v: %d hits, local %d", qi, terms, f, len(got), len(want))
					continue
				}
				for i := range want {
					if got[i].Key != want[i].Key || math.Abs(got[i].Score-want[i].Score) > 1e-6*math.Abs(want[i].Score) {
						t.Errorf("query %d %v filter %+v rank %d: %+v, local %+v", qi, terms, f, i, got[i], want[i])
						break
					}
				}
			}
			t.Logf("%s: %d queries compared (%d with hits), %d passages", tc.name, compared, nonEmpty, len(ps))
			if nonEmpty < compared/2 {
				t.Fatalf("only %d of %d queries found anything", nonEmpty, compared)
			}
		})
	}
}
