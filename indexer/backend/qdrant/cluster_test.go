package qdrant

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

const testDim = 32

func randomVectors(n int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, testDim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// writeGen writes passages and vectors as one generation, lexical part first (the indexer's
// order).
func writeGen(t testing.TB, e *Engine, gen backend.Gen, ps []corpus.Passage, vecs [][]float32) {
	t.Helper()
	ctx := context.Background()
	writeLexical(t, e.Lexical(), gen, ps)
	w, err := e.Vectors().Begin(ctx, gen, testDim, nil, backend.VectorBegin{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]uint32, len(vecs))
	for i := range keys {
		keys[i] = uint32(i)
	}
	if err := w.Add(ctx, keys, vecs); err != nil {
		t.Fatal(err)
	}
	vc, err := w.Commit(ctx, backend.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster keeps its parameters and the committed part: nothing for the manifest to
	// record as a graph's, no file hashed locally, nothing to reopen from memory (were there,
	// the indexer would record them for it or skip opening its collection).
	if vc.Params != nil || len(vc.Files) != 0 || vc.Reopen != nil {
		t.Errorf("Qdrant's vector commit: %+v, want nothing local", vc)
	}
}

// exact is the brute-force cosine top k of the passages that pass f, ties by key.
func exact(ps []corpus.Passage, vecs [][]float32, q []float32, k int, f backend.Filter) []backend.Hit {
	norm := func(v []float32) float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	qn := norm(q)
	var hits []backend.Hit
	for i, v := range vecs {
		if !f.Match(ps[i].Date, ps[i].Source) {
			continue
		}
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		hits = append(hits, backend.Hit{Key: uint32(i), Score: d / (norm(v) * qn)})
	}
	sortHits(hits)
	return hits[:min(k, len(hits))]
}

// TestCluster runs on one 3-peer cluster (6 shards, replication 2): dense search against
// brute force with and without filters, the passages read back, an alias swap under a query
// loop, and a peer killed during queries.
func TestCluster(t *testing.T) {
	ctx := context.Background()
	all := sciFact(t)
	ps := all[:2000] // a subset keeps the suite short; TestBM25MatchesBleve takes all of SciFact
	vecs := randomVectors(len(ps), 1)
	c := qdranttest.Start(t, 3)
	e := newEngine(t, c, "kc", Options{Dim: testDim})
	genA, genB := backend.Gen{Name: "g-000001"}, backend.Gen{Name: "g-000002"}
	writeGen(t, e, genA, ps, vecs)
	writeGen(t, e, genB, ps[:1000], vecs[:1000])

	t.Run("verify", func(t *testing.T) {
		c, err := e.Verify(ctx, genA)
		if err != nil || c != (Counts{Passages: len(ps), Dense: len(ps), BM25: len(ps)}) {
			t.Fatalf("Verify = %+v %v", c, err)
		}
		// A generation whose vector part never committed fails verification.
		genC := backend.Gen{Name: "g-000003"}
		writeLexical(t, e.Lexical(), genC, ps[:100])
		if _, err := e.Verify(ctx, genC); err == nil || !strings.Contains(err.Error(), "lack a dense vector") {
			t.Fatalf("Verify without vectors: %v", err)
		}
		if err := e.Drop(ctx, genC); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("dense against brute force, with filters", func(t *testing.T) {
		r, err := e.Vectors().Open(ctx, genA, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len() != len(ps) || r.Dim() != testDim {
			t.Fatalf("Len %d Dim %d", r.Len(), r.Dim())
		}
		filters := []backend.Filter{{}, {Sources: []string{"wiki"}}, {DateFrom: day("2003-01-01"), DateTo: day("2010-12-31")}, {DateTo: day("2005-01-01"), Sources: []string{"news", "pubmed"}}}
		queries := randomVectors(50, 2)
		for _, f := range filters {
			found, total := 0, 0
			for _, q := range queries {
				want := exact(ps, vecs, q, 10, f)
				gotExact, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: 10, Exact: true, Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(hitKeys(gotExact), hitKeys(want)) {
					t.Errorf("filter %+v: exact %v, brute force %v", f, hitKeys(gotExact), hitKeys(want))
				}
				got, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: 10, Ef: 64, Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				in := map[uint32]bool{}
				for _, h := range want {
					in[h.Key] = true
				}
				for _, h := range got {
					if !f.Match(ps[h.Key].Date, ps[h.Key].Source) {
						t.Errorf("filter %+v: hit %d does not pass", f, h.Key)
					}
					if in[h.Key] {
						found++
					}
				}
				total += len(want)
			}
			if recall := float64(found) / float64(total); recall < 0.99 {
				t.Errorf("filter %+v: recall@10 %.3f, want >= 0.99", f, recall)
			}
		}
	})

	t.Run("passages round trip", func(t *testing.T) {
		pr, err := e.OpenPassages(ctx, genA)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Live() != len(ps) {
			t.Fatalf("Live %d, want %d", pr.Live(), len(ps))
		}
		n := 0
		err = pr.Each(t.Context(), func(key uint32, p corpus.Passage) error {
			if key != uint32(n) {
				t.Fatalf("Each: key %d at position %d", key, n)
			}
			if !reflect.DeepEqual(p, ps[key]) {
				t.Fatalf("passage %d: %+v, want %+v", key, p, ps[key])
			}
			n++
			return nil
		})
		if err != nil || n != len(ps) {
			t.Fatalf("Each: %d passages, %v", n, err)
		}
		d, src, err := pr.Meta(t.Context(), 7)
		if err != nil || !d.Equal(ps[7].Date) || src != ps[7].Source {
			t.Errorf("Meta(7) = %v %q %v, want %v %q", d, src, err, ps[7].Date, ps[7].Source)
		}
		if id, err := pr.DocID(t.Context(), 7); err != nil || id != ps[7].DocID {
			t.Errorf("DocID(7) = %q %v", id, err)
		}
		deadPast, errPast := pr.Dead(t.Context(), uint32(len(ps)))
		dead0, err0 := pr.Dead(t.Context(), 0)
		if !deadPast || dead0 || errPast != nil || err0 != nil {
			t.Errorf("Dead(%d) = %v %v, Dead(0) = %v %v; want true, false and no errors", len(ps), deadPast, errPast, dead0, err0)
		}
	})

	t.Run("alias swap under queries", func(t *testing.T) {
		if err := e.Promote(ctx, genA); err != nil {
			t.Fatal(err)
		}
		// Promote settles first: every active replica of every shard holds the same points.
		if why, err := e.unsettled(ctx, e.Collection(genA.Name)); err != nil || why != "" {
			t.Fatalf("promoted with replicas disagreeing: %q %v", why, err)
		}
		stop := make(chan struct{})
		var mu sync.Mutex
		seen := map[string]int{}
		var errs []error
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					pts, err := e.clients[i%len(e.clients)].Query(ctx, &qdrant.QueryPoints{CollectionName: e.Alias(),
						Query: qdrant.NewQueryDense(vecs[i%len(vecs)]), Using: qdrant.PtrOf(vecDense), Limit: qdrant.PtrOf(uint64(20)),
						WithPayload: qdrant.NewWithPayloadInclude(fieldGen)})
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						gens := map[string]bool{}
						for _, p := range pts {
							gens[p.GetPayload()[fieldGen].GetStringValue()] = true
						}
						if len(gens) != 1 {
							errs = append(errs, &mixError{gens})
						}
						for g := range gens {
							seen[g]++
						}
					}
					mu.Unlock()
				}
			}()
		}
		for i := 0; i < 6; i++ {
			time.Sleep(150 * time.Millisecond)
			g := genB
			if i%2 == 1 {
				g = genA
			}
			if err := e.Promote(ctx, g); err != nil {
				t.Error(err)
			}
		}
		time.Sleep(150 * time.Millisecond)
		close(stop)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("%d failed or mixed queries, first: %v", len(errs), errs[0])
		}
		if seen[genA.Name] == 0 || seen[genB.Name] == 0 {
			t.Fatalf("queries saw %v: the swap was not exercised", seen)
		}
		t.Logf("alias swaps: queries per generation %v", seen)
	})

	t.Run("peer killed during a write", func(t *testing.T) {
		genD := backend.Gen{Name: "g-000004"}
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(300 * time.Millisecond)
			c.Kill(2)
		}()
		start := time.Now()
		writeGen(t, e, genD, ps, vecs)
		<-done
		t.Logf("write of %d passages with peer 2 killed 300ms in: %v", len(ps), time.Since(start).Round(time.Millisecond))
		got, err := e.Verify(ctx, genD)
		if err != nil || got.Passages != len(ps) {
			t.Fatalf("Verify after a write with a peer killed: %+v %v", got, err)
		}
		start = time.Now()
		c.Restart(t, 2)
		waitActive(t, e, c, 2, genD)
		t.Logf("peer 2 restarted, replicas active after %v", time.Since(start).Round(time.Millisecond))
		if err := e.Drop(ctx, genD); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("peer killed during queries", func(t *testing.T) {
		r, err := e.Lexical().Open(ctx, genA, backend.Scoring{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		queries := sciFactQueries(t)
		want := make([][]backend.Hit, 60)
		for i := range want {
			if want[i], err = r.Search(ctx, backend.LexicalQuery{Terms: queries[i], N: 10}); err != nil {
				t.Fatal(err)
			}
		}
		failed := 0
		for round := 0; round < 3; round++ {
			if round == 1 {
				c.Kill(1)
			}
			for i := range want {
				got, err := r.Search(ctx, backend.LexicalQuery{Terms: queries[i], N: 10})
				if err != nil {
					failed++
					t.Errorf("round %d query %d: %v", round, i, err)
					continue
				}
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("round %d query %d: %v, before the kill %v", round, i, hitKeys(got), hitKeys(want[i]))
				}
			}
		}
		if failed > 0 {
			t.Fatalf("%d failed queries with a peer down", failed)
		}
		c.Restart(t, 1)
		waitActive(t, e, c, 1, genA)
	})
}

// waitActive waits until every replica peer i holds of gen's collection is active again: a
// restarted peer catches up by itself.
func waitActive(t *testing.T, e *Engine, c *qdranttest.Cluster, i int, gen backend.Gen) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		info, err := e.clients[i].GetCollectionClusterInfo(ctx, e.Collection(gen.Name))
		active := err == nil && len(info.GetLocalShards()) > 0
		for _, s := range info.GetLocalShards() {
			if s.GetState() != qdrant.ReplicaState_Active {
				active = false
			}
		}
		if active {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("peer %d's replicas not active 60s after its restart: %v %v", i, info, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type mixError struct{ gens map[string]bool }

func (m *mixError) Error() string {
	var g []string
	for k := range m.gens {
		g = append(g, k)
	}
	sort.Strings(g)
	return "one query saw generations " + g[0] + " and " + g[len(g)-1]
}

func hitKeys(h []backend.Hit) []uint32 {
	out := make([]uint32, len(h))
	for i, x := range h {
		out[i] = x.Key
	}
	return out
}
