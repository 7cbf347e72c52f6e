package hnswvec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// meta gives every key a source: key%100 < pct of them are "rare", the rest "common".
type meta struct{ pct uint32 }

func (m meta) Meta(_ context.Context, key uint32) (time.Time, string, error) {
	if key%100 < m.pct {
		return time.Time{}, "rare", nil
	}
	return time.Time{}, "common", nil
}

// Language and BlockType: every passage is prose of an index of one language.
func (meta) Language(context.Context, uint32) (string, error)  { return "", nil }
func (meta) BlockType(context.Context, uint32) (string, error) { return "", nil }

func randVecs(rng *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// TestFilteredSearchInsideTheGraph: a filter that passes 2% of the passages still gives K
// hits, all passing, nearly the exact filtered top K; filtering the unfiltered top K after
// the search, as search did before the seam, would leave almost nothing.
func TestFilteredSearchInsideTheGraph(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n, dim, k = 5000, 32, 10
	rng := rand.New(rand.NewPCG(1, 2))
	w, err := Engine{Params: hnsw.Options{M: 12, EfConstruction: 100, Seed: 1, Workers: 1}}.Begin(ctx, backend.Gen{Dir: dir}, dim, nil, backend.VectorBegin{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]uint32, n)
	for i := range keys {
		keys[i] = uint32(i)
	}
	if err := w.Add(ctx, keys, randVecs(rng, n, dim)); err != nil {
		t.Fatal(err)
	}
	w.Delete(2) // a deleted passing key must never come back
	if _, err := w.Commit(ctx, backend.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	m := meta{pct: 2}
	for _, eng := range []Engine{{}, {InMemory: true}} {
		t.Run(fmt.Sprintf("in memory %v", eng.InMemory), func(t *testing.T) {
			filteredSearch(t, eng, dir, m, rng)
		})
	}
}

// filteredSearch is the body of TestFilteredSearchInsideTheGraph for one engine.
func filteredSearch(t *testing.T, eng Engine, dir string, m meta, rng *rand.Rand) {
	const dim, k = 32, 10
	ctx := context.Background()
	r, err := eng.Open(ctx, backend.Gen{Dir: dir}, m)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if mapped := r.(*Reader).Graph().Mapped(); mapped == eng.InMemory {
		t.Fatalf("graph mapped %v with InMemory %v", mapped, eng.InMemory)
	}
	rare := backend.Filter{Sources: []string{"rare"}}
	var recall, postFiltered float64
	const queries = 50
	for qi := range queries {
		q := randVecs(rng, 1, dim)[0]
		got, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Ef: 64, Filter: rare})
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Exact: true, Filter: rare})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != k || len(want) != k {
			t.Fatalf("query %d: %d hits, exact %d, want %d", qi, len(got), len(want), k)
		}
		exact := map[uint32]bool{}
		for _, h := range want {
			exact[h.Key] = true
		}
		for _, h := range got {
			if _, src, _ := m.Meta(ctx, h.Key); src != "rare" || h.Key == 2 {
				t.Fatalf("query %d: hit %d fails the filter or is deleted", qi, h.Key)
			}
			if exact[h.Key] {
				recall++
			}
		}
		all, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range all {
			if _, src, _ := m.Meta(ctx, h.Key); src == "rare" {
				postFiltered++
			}
		}
	}
	recall /= queries * k
	postFiltered /= queries
	t.Logf("filtered recall@%d %.3f; filtering after the search would keep %.2f hits a query", k, recall, postFiltered)
	if recall < 0.9 {
		t.Errorf("filtered recall@%d %.3f, want >= 0.9", k, recall)
	}
	if postFiltered > 2 {
		t.Errorf("post-filtering kept %.2f hits a query: the filter is not selective enough to test anything", postFiltered)
	}
}

// TestDeriveFromMapped: a generation derived from a mapped one takes its graph over, grows it
// (from codes or reading its floats into memory, as the engine builds) and saves it; the new
// generation has both old and new vectors. Built from codes, the float vectors of the build
// leave no file in the generation's directory.
func TestDeriveFromMapped(t *testing.T) {
	for _, tc := range []struct {
		build, codes, want string
	}{
		{"", "", hnsw.BuildCodes}, // the default: int8 codes, built from them
		{hnsw.BuildFloat, "", hnsw.BuildFloat},
		{"", hnsw.CodesBinary, hnsw.BuildCodes}, // binary codes too: the floats stay on disk
		{hnsw.BuildCodes, hnsw.CodesBinary, hnsw.BuildCodes},
	} {
		t.Run(fmt.Sprintf("build %q codes %q", tc.build, tc.codes), func(t *testing.T) {
			deriveFromMapped(t, hnsw.Options{M: 8, EfConstruction: 40, Seed: 1, Build: tc.build, Codes: tc.codes}, tc.want)
		})
	}
}

func deriveFromMapped(t *testing.T, params hnsw.Options, wantBuild string) {
	ctx := context.Background()
	base, next := backend.Gen{Dir: t.TempDir()}, backend.Gen{Dir: t.TempDir()}
	rng := rand.New(rand.NewPCG(3, 4))
	eng := Engine{Params: params}
	w, err := eng.Begin(ctx, base, 16, nil, backend.VectorBegin{})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.(*Writer).Options().BuildKind(); got != wantBuild {
		t.Errorf("new graph builds from %s, want %s", got, wantBuild)
	}
	vecs := randVecs(rng, 300, 16)
	if err := w.Add(ctx, seq(0, 200), vecs[:200]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, backend.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := eng.Open(ctx, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.(*Reader).Graph().Mapped() {
		t.Fatal("default engine did not map the graph")
	}
	w2, err := eng.Begin(ctx, next, 16, r, backend.VectorBegin{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // taken over: must not close the writer's graph
	w2.Delete(5)
	if err := w2.Add(ctx, seq(200, 300), vecs[200:]); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Commit(ctx, backend.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w2.(*Writer).Options().BuildKind(); got != wantBuild {
		t.Errorf("derived graph builds from %s, want %s", got, wantBuild)
	}
	for _, g := range []backend.Gen{base, next} {
		ents, err := os.ReadDir(g.Dir)
		if err != nil || len(ents) != 1 || ents[0].Name() != Name {
			t.Errorf("%s holds %v (%v), want only %s", g.Dir, ents, err, Name)
		}
	}
	r2, err := eng.Open(ctx, next, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	has5, err5 := r2.Has(ctx, 5)
	has250, err250 := r2.Has(ctx, 250)
	if r2.Len() != 300 || r2.Live() != 299 || has5 || !has250 || err5 != nil || err250 != nil {
		t.Fatalf("derived generation: Len %d Live %d Has(5) %v %v Has(250) %v %v", r2.Len(), r2.Live(), has5, err5, has250, err250)
	}
	for _, key := range []uint32{10, 250} {
		hits, err := r2.Search(ctx, backend.VectorQuery{Vector: vecs[key], K: 1, Ef: 32})
		if err != nil || len(hits) != 1 || hits[0].Key != key {
			t.Errorf("searching vector %d: %v, %v", key, hits, err)
		}
	}
}

func seq(from, to uint32) []uint32 {
	out := make([]uint32, 0, to-from)
	for k := from; k < to; k++ {
		out = append(out, k)
	}
	return out
}

// TestMetaErrorFailsTheSearch: an unreadable passage fails the search rather than being
// treated as not matching.
func TestMetaErrorFailsTheSearch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Engine{}.Begin(ctx, backend.Gen{Dir: dir}, 4, nil, backend.VectorBegin{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, []uint32{0, 1}, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, backend.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, failingMeta{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Search(ctx, backend.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1, Filter: backend.Filter{Sources: []string{"x"}}})
	if err == nil {
		t.Fatal("search succeeded with unreadable metadata")
	}
}

type failingMeta struct{}

func (failingMeta) Meta(_ context.Context, key uint32) (time.Time, string, error) {
	return time.Time{}, "", fmt.Errorf("passage key %d: bad offsets", key)
}

func (failingMeta) Language(_ context.Context, key uint32) (string, error) {
	return "", fmt.Errorf("passage key %d: bad offsets", key)
}

func (failingMeta) BlockType(_ context.Context, key uint32) (string, error) {
	return "", fmt.Errorf("passage key %d: bad offsets", key)
}
