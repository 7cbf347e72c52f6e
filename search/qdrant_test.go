package search

import (
	"context"
	"reflect"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// TestHybridInOneCallOnQdrant: on an index on Qdrant, whose lexical reader answers both
// rankings of a hybrid query in one round trip (backend.HybridSearcher), search uses it, and
// its hits are those of the two separate calls: same passages, same order, same scores, under
// both fusions and a filter.
func TestHybridInOneCallOnQdrant(t *testing.T) {
	c := qdranttest.Start(t, 1)
	ctx := context.Background()
	loc := "qdrant://" + c.Peers[0].GRPCAddr() + "/faq?shards=2&rest=" + c.Peers[0].HTTPAddr()
	if _, err := buildAt(ctx, at(loc), indexer.Options{Inputs: []indexer.InputSpec{{Path: shared(t, faq)}}, EmbedInline: true, Encoder: bow}); err != nil {
		t.Fatal(err)
	}
	one, err := Open(t.Context(), at(loc), Options{Encoder: bow})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if _, ok := one.gen.Lexical.(backend.HybridSearcher); !ok {
		t.Fatalf("the Qdrant lexical reader (%T) does not offer backend.HybridSearcher", one.gen.Lexical)
	}
	two, err := Open(t.Context(), at(loc), Options{Encoder: bow})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	two.twoCalls = true
	queries := []string{"how does the virus spread", "should I wear a mask", "incubation period",
		"symptoms of the disease", "can pets get infected", "wash your hands", "school closure children",
		"testing for coronavirus", "travel restrictions", "the of and"}
	compared := 0
	for _, fusion := range []Fusion{FusionRRF, FusionConvex} {
		for _, f := range []Filters{{}, {Sources: []string{"nowhere"}}} {
			for _, q := range queries {
				req := Request{Text: q, K: 10, Mode: ModeHybrid, Fusion: fusion, Filters: f}
				a, err := one.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := two.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s %q %+v: one call %v, two calls %v", fusion, q, f, hitIDs(a), hitIDs(b))
				}
				compared += len(a)
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d hits compared: the queries found too little to compare", compared)
	}
}

func hitIDs(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}
