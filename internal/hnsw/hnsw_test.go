package hnsw_test

import (
	"context"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// fixture is a clustered data set (the bench generator: 200 Gaussian centres, sigma 0.8,
// normalised) with its graph and exact reference.
type fixture struct {
	ds    annbench.Dataset
	keys  []uint64
	graph *hnsw.Graph
	exact *hnsw.Exact
}

// newFixture builds n base vectors of dimension dim (keys 1000+i, so keys differ from node ids)
// and q queries.
func newFixture(t testing.TB, n, q, dim int, opts hnsw.Options) *fixture {
	t.Helper()
	ds := annbench.Generate(n, q, dim, 7)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(1000 + i)
	}
	g, err := hnsw.New(dim, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Add(context.Background(), keys, ds.Base); err != nil {
		t.Fatal(err)
	}
	ex, err := hnsw.NewExact(dim, opts.Metric)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Add(keys, ds.Base); err != nil {
		t.Fatal(err)
	}
	return &fixture{ds: ds, keys: keys, graph: g, exact: ex}
}

// recall is mean recall@k of the graph at ef against the exact searcher over the queries.
func (f *fixture) recall(t testing.TB, k, ef int) float64 {
	t.Helper()
	found, total := 0, 0
	for i, q := range f.ds.Queries {
		want, err := f.exact.Search(q, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.graph.Search(q, k, ef)
		if err != nil {
			t.Fatal(err)
		}
		checkSorted(t, got)
		truth := map[uint64]bool{}
		for _, r := range want {
			truth[r.Key] = true
		}
		for _, r := range got {
			if truth[r.Key] {
				found++
			}
		}
		total += len(want)
		if len(got) != len(want) {
			t.Fatalf("query %d: %d results, exact has %d", i, len(got), len(want))
		}
	}
	return float64(found) / float64(total)
}

func checkSorted(t testing.TB, rs []hnsw.Result) {
	t.Helper()
	for i := 1; i < len(rs); i++ {
		if rs[i].Score > rs[i-1].Score || (rs[i].Score == rs[i-1].Score && rs[i].Key < rs[i-1].Key) {
			t.Fatalf("results not sorted at %d: %+v", i, rs)
		}
	}
}

func TestRecallClustered(t *testing.T) {
	// 5,000 x 64 clustered vectors, 200 queries not in the base set, recall@10 at ef 32.
	for _, tc := range []struct {
		name    string
		workers int
		metric  hnsw.Metric
	}{
		{"serial-cosine", 1, hnsw.Cosine},
		{"parallel-cosine", 4, hnsw.Cosine},
		{"serial-dot", 1, hnsw.Dot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 5000, 200, 64, hnsw.Options{Seed: 1, Workers: tc.workers, Metric: tc.metric})
			if r := f.recall(t, 10, 32); r < 0.95 {
				t.Errorf("recall@10 at ef 32 = %.3f, want >= 0.95", r)
			} else {
				t.Logf("recall@10 at ef 32 = %.3f (ef 10: %.3f)", r, f.recall(t, 10, 10))
			}
			// A larger ef must not make recall worse by more than noise.
			if lo, hi := f.recall(t, 10, 16), f.recall(t, 10, 128); hi+0.005 < lo {
				t.Errorf("recall at ef 128 (%.3f) below ef 16 (%.3f)", hi, lo)
			}
		})
	}
}

func TestEveryPointFindsItself(t *testing.T) {
	f := newFixture(t, 3000, 1, 48, hnsw.Options{Seed: 3})
	miss := 0
	for i, v := range f.ds.Base {
		got, err := f.graph.Search(v, 1, 32)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Key != f.keys[i] {
			miss++
			if miss <= 3 {
				t.Errorf("point %d (key %d): top-1 %+v", i, f.keys[i], got)
			}
		}
	}
	if miss > 0 {
		t.Errorf("%d of %d points do not find themselves as top-1", miss, len(f.ds.Base))
	}
}

func TestSearchEdgeCases(t *testing.T) {
	g, err := hnsw.New(4, hnsw.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := g.Search([]float32{1, 0, 0, 0}, 5, 0); err != nil || len(got) != 0 {
		t.Errorf("empty graph: %v, %v", got, err)
	}
	if err := g.Add(context.Background(), []uint64{7, 8}, [][]float32{{1, 0, 0, 0}, {0, 2, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	got, err := g.Search([]float32{0, 1, 0, 0}, 5, 0)
	if err != nil || len(got) != 2 || got[0].Key != 8 || got[0].Score < 0.9999 || got[1].Score != 0 {
		t.Errorf("k above size: %+v, %v (cosine must normalise the stored {0,2,0,0})", got, err)
	}
	if _, err := g.Search([]float32{1, 0}, 1, 0); err == nil {
		t.Error("wrong query dimension accepted")
	}
	if got, _ := g.Search([]float32{1, 0, 0, 0}, 0, 0); got != nil {
		t.Errorf("k=0 returned %v", got)
	}
	g.Delete(7)
	g.Delete(8)
	if got, _ := g.Search([]float32{1, 0, 0, 0}, 3, 0); len(got) != 0 {
		t.Errorf("all deleted, got %v", got)
	}
}

func TestAddValidation(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		keys []uint64
		vecs [][]float32
	}{
		{"length mismatch", []uint64{1, 2}, [][]float32{{1, 0, 0}}},
		{"wrong dimension", []uint64{5}, [][]float32{{1, 0}}},
		{"duplicate in batch", []uint64{5, 5}, [][]float32{{1, 0, 0}, {0, 1, 0}}},
		{"key already live", []uint64{1}, [][]float32{{1, 0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := hnsw.New(3, hnsw.Options{})
			if err := g.Add(ctx, []uint64{1}, [][]float32{{0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
			if err := g.Add(ctx, tc.keys, tc.vecs); err == nil {
				t.Fatal("accepted")
			}
			if g.Len() != 1 {
				t.Errorf("failed Add changed the graph: Len %d", g.Len())
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts hnsw.Options
		ok   bool
	}{
		{hnsw.Options{}, true},
		{hnsw.Options{M: 1}, false},
		{hnsw.Options{M: 300}, false},
		{hnsw.Options{M: 32, EfConstruction: 16}, false},
		{hnsw.Options{EfSearch: -1}, false},
		{hnsw.Options{Workers: -2}, false},
		{hnsw.Options{Metric: 9}, false},
		{hnsw.Options{M: 8, EfConstruction: 8, EfSearch: 1, Workers: 1, Metric: hnsw.Dot}, true},
	} {
		if err := tc.opts.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tc.opts, err, tc.ok)
		}
	}
	if _, err := hnsw.New(0, hnsw.Options{}); err == nil {
		t.Error("dimension 0 accepted")
	}
}

func TestDeterministicSerialBuild(t *testing.T) {
	a := newFixture(t, 1500, 1, 32, hnsw.Options{Seed: 5, Workers: 1})
	b := newFixture(t, 1500, 1, 32, hnsw.Options{Seed: 5, Workers: 1})
	c := newFixture(t, 1500, 1, 32, hnsw.Options{Seed: 6, Workers: 1})
	ba, bb, bc := serialize(t, a.graph), serialize(t, b.graph), serialize(t, c.graph)
	if string(ba) != string(bb) {
		t.Error("same seed, Workers 1: graphs differ")
	}
	if string(ba) == string(bc) {
		t.Error("different seeds built identical graphs")
	}
}
