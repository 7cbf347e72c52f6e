package qdrant

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// robustDim, robustPoints: enough 64-d vectors that, with the indexing threshold lowered,
// every shard's segments get an HNSW graph (20,000 x 256 bytes over 6 shards is 850 KB a
// shard, above robustHNSW's 100 KB and below Qdrant's default 10,000 KB).
const (
	robustDim    = 64
	robustPoints = 20000
	robustEf     = 128
)

var robustHNSW = HNSW{M: 16, EfConstruct: 100, IndexingThresholdKB: 100, FullScanThresholdKB: 10}

// clustered returns n vectors around centers Gaussian centres (the shape of sentence
// embeddings: topics, and passages near their topic), seeded.
func clustered(n, dim, centers int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	cs := make([][]float32, centers)
	for i := range cs {
		cs[i] = make([]float32, dim)
		for j := range cs[i] {
			cs[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := cs[r.IntN(centers)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.5*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// robustPassages repeats SciFact's passages up to n keys (texts repeat; the BM25 statistics
// are those of the repeated collection, which the tests compare with itself).
func robustPassages(t testing.TB, n int) []corpus.Passage {
	all := sciFact(t)
	out := make([]corpus.Passage, n)
	for i := range out {
		out[i] = all[i%len(all)]
	}
	return out
}

// writeVectors commits a generation's vector part: keys with their vectors, on base's.
func writeVectors(t testing.TB, e *Engine, gen backend.Gen, base backend.VectorReader, keys []uint32, vecs [][]float32) error {
	t.Helper()
	ctx := context.Background()
	w, err := e.Vectors().Begin(ctx, gen, e.opts.Dim, base, backend.VectorBegin{})
	if err != nil {
		return err
	}
	if err := w.Add(ctx, keys, vecs); err != nil {
		w.Abort()
		return err
	}
	_, err = w.Commit(ctx, backend.CommitOptions{})
	return err
}

func seq(lo, hi int) []uint32 {
	out := make([]uint32, 0, hi-lo)
	for k := lo; k < hi; k++ {
		out = append(out, uint32(k))
	}
	return out
}

// TestClusterHNSWAndFaults runs on one 3-peer cluster (6 shards, replication 2) holding
// 20,000 passages with clustered 64-d vectors, indexed by Qdrant's HNSW: the graph's recall
// against exact search, hybrid queries against the two separate searches, a peer killed with
// SIGKILL during a query loop, and one or two during an update.
//
// Under the race detector, where analysing 20,000 passages takes a minute, it holds 6,000
// passages and runs the parts whose Go code runs concurrently (hybrid, the query loop, the
// one-peer update); with -short it does not run. make test's plain pass runs all of it.
func TestClusterHNSWAndFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and indexes 20,000 passages on 3 peers (TestCluster queries a cluster and kills a peer under -short)")
	}
	ctx := context.Background()
	np, hnswOpts := robustPoints, robustHNSW
	if raceEnabled {
		np = 6000
		hnswOpts.IndexingThresholdKB = 20 // so that 6,000 vectors are indexed too
	}
	ps := robustPassages(t, np)
	vecs := clustered(np, robustDim, 100, 11)
	c := qdranttest.Start(t, 3)
	e := newEngine(t, c, "kr", Options{Dim: robustDim, HNSW: hnswOpts})
	genA := backend.Gen{Name: "g-000001"}
	start := time.Now()
	writeLexical(t, e.Lexical(), genA, ps)
	if err := writeVectors(t, e, genA, nil, seq(0, np), vecs); err != nil {
		t.Fatal(err)
	}
	written := time.Since(start)
	// Wait for Qdrant's background indexing: the recall is the graph's only then, and the
	// comparisons below want a settled collection (see the hybrid subtest).
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	st, err := e.waitIndexed(wctx, genA, 250*time.Millisecond)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	// Every passage holds a dense, a bm25 and a tf vector, and all of them are indexed.
	if st.Vectors != 3*uint64(np) || st.Indexed < st.Vectors {
		t.Fatalf("index state %+v: want %d vectors, all indexed", st, 3*np)
	}
	t.Logf("%d passages written in %v, indexed %v later: %+v", np, written.Round(time.Millisecond), (time.Since(start) - written).Round(time.Millisecond), st)

	t.Run("collection config", func(t *testing.T) {
		// The options reach the collection; zero options leave Qdrant's defaults, which the
		// HNSW doc comment states for this server version.
		e0 := newEngine(t, c, "kr0", Options{Dim: robustDim})
		if err := e0.ensureCollection(ctx, e0.Collection("g-000001")); err != nil {
			t.Fatal(err)
		}
		defer e0.Drop(ctx, backend.Gen{Name: "g-000001"})
		for _, tc := range []struct {
			name string
			e    *Engine
			want [4]uint64 // m, ef_construct, full_scan_threshold, indexing_threshold
		}{
			{"options", e, [4]uint64{16, 100, 10, uint64(hnswOpts.IndexingThresholdKB)}},
			{"Qdrant " + qdranttest.Version + " defaults", e0, [4]uint64{16, 100, 10000, 10000}},
		} {
			var info *qdrant.CollectionInfo
			err := tc.e.do(ctx, "info", "", func(ctx context.Context, cl *qdrant.Client) error {
				var err error
				info, err = cl.GetCollectionInfo(ctx, tc.e.Collection("g-000001"))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			h, o := info.GetConfig().GetHnswConfig(), info.GetConfig().GetOptimizerConfig()
			got := [4]uint64{h.GetM(), h.GetEfConstruct(), h.GetFullScanThreshold(), o.GetIndexingThreshold()}
			if got != tc.want {
				t.Errorf("%s: m, ef_construct, full_scan_threshold, indexing_threshold = %v, want %v", tc.name, got, tc.want)
			}
		}
	})

	lr, err := e.OpenLexical(ctx, e.Collection(genA.Name), backend.Scoring{})
	if err != nil {
		t.Fatal(err)
	}
	vr, err := e.OpenVectors(ctx, e.Collection(genA.Name))
	if err != nil {
		t.Fatal(err)
	}
	queryVecs := clustered(200, robustDim, 100, 11^0xabc)
	lexQueries := sciFactQueries(t)

	t.Run("HNSW recall against exact", func(t *testing.T) {
		if raceEnabled {
			t.Skip("race pass: the ordinary pass measures recall on 20,000 indexed passages")
		}
		exactOf := make([][]backend.Hit, len(queryVecs))
		for i, q := range queryVecs {
			if exactOf[i], err = vr.Search(ctx, backend.VectorQuery{Vector: q, K: 10, Exact: true}); err != nil {
				t.Fatal(err)
			}
			// Qdrant's exact search is the brute force (checked on a few, to keep it cheap).
			if i < 20 {
				if want := exact(ps, vecs, q, 10, backend.Filter{}); !reflect.DeepEqual(hitKeys(exactOf[i]), hitKeys(want)) {
					t.Fatalf("query %d: exact %v, brute force %v", i, hitKeys(exactOf[i]), hitKeys(want))
				}
			}
		}
		recallAt := func(ef int) float64 {
			found := 0
			for i, q := range queryVecs {
				got, err := vr.Search(ctx, backend.VectorQuery{Vector: q, K: 10, Ef: ef})
				if err != nil {
					t.Fatal(err)
				}
				in := map[uint32]bool{}
				for _, h := range exactOf[i] {
					in[h.Key] = true
				}
				for _, h := range got {
					if in[h.Key] {
						found++
					}
				}
			}
			return float64(found) / float64(10*len(queryVecs))
		}
		recall := map[int]float64{}
		for _, ef := range []int{10, 32, 64, 128, 256} {
			recall[ef] = recallAt(ef)
		}
		t.Logf("recall@10 against exact over %d queries, by ef: %v", len(queryVecs), recall)
		if recall[robustEf] < 0.99 {
			t.Errorf("recall@10 at ef %d: %.4f, want >= 0.99 (within 0.01 of exact)", robustEf, recall[robustEf])
		}
		// A scan is exact at any ef: a lower recall at ef 10 shows the graph answered.
		if recall[10] >= 0.99 {
			t.Errorf("recall@10 at ef 10: %.4f: as good as exact, so the queries scanned instead of walking the graph", recall[10])
		}
	})

	// Hybrid against the separate searches runs on the settled collection: once, run within
	// seconds of the writes while Qdrant was still optimising (status yellow), 2 of 120
	// searches each lacked one passage that the other search of the same query returned.
	t.Run("hybrid equals the two searches", func(t *testing.T) {
		filters := []backend.Filter{{}, {Sources: []string{"wiki"}}, {DateFrom: day("2005-01-01"), DateTo: day("2012-06-30")}}
		oneTrip := 0
		for i := 0; i < 60; i++ {
			lq := backend.LexicalQuery{Terms: lexQueries[i], N: 10, Filter: filters[i%len(filters)]}
			vq := backend.VectorQuery{Vector: queryVecs[i], K: 10, Exact: true, Filter: filters[i%len(filters)]}
			wantLex, err := lr.Search(ctx, lq)
			if err != nil {
				t.Fatal(err)
			}
			wantDense, err := vr.Search(ctx, vq)
			if err != nil {
				t.Fatal(err)
			}
			got, err := lr.hybrid(ctx, lq, vq)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Lexical, wantLex) || !reflect.DeepEqual(got.Dense, wantDense) {
				t.Errorf("query %d: hybrid %v / %v, separate %v / %v", i, got.Lexical, got.Dense, wantLex, wantDense)
			}
			if len(wantLex) == 0 || len(wantDense) == 0 {
				t.Errorf("query %d: an empty list (%d lexical, %d dense) compares nothing", i, len(wantLex), len(wantDense))
			}
			if got.Requests == 1 {
				oneTrip++
			}
		}
		t.Logf("hybrid: %d of 60 queries in one round trip", oneTrip)
		if oneTrip == 0 {
			t.Errorf("no hybrid query took one round trip")
		}
		// Either side empty: still what the separate searches return.
		for _, tc := range []struct {
			name string
			lq   backend.LexicalQuery
			vq   backend.VectorQuery
		}{
			{"no query terms", backend.LexicalQuery{N: 10}, backend.VectorQuery{Vector: queryVecs[0], K: 10, Exact: true}},
			{"terms outside the vocabulary", backend.LexicalQuery{Terms: []string{"zzqxj", "qqzv"}, N: 10}, backend.VectorQuery{Vector: queryVecs[1], K: 10, Exact: true}},
			{"no dense query", backend.LexicalQuery{Terms: lexQueries[2], N: 10}, backend.VectorQuery{}},
			{"neither", backend.LexicalQuery{}, backend.VectorQuery{}},
		} {
			wantLex, err := lr.Search(ctx, tc.lq)
			if err != nil {
				t.Fatal(err)
			}
			wantDense, err := vr.Search(ctx, tc.vq)
			if err != nil {
				t.Fatal(err)
			}
			got, err := lr.hybrid(ctx, tc.lq, tc.vq)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !reflect.DeepEqual(got.Lexical, wantLex) || !reflect.DeepEqual(got.Dense, wantDense) {
				t.Errorf("%s: hybrid %v / %v, separate %v / %v", tc.name, got.Lexical, got.Dense, wantLex, wantDense)
			}
		}
	})

	t.Run("peer killed during a query loop", func(t *testing.T) {
		const n = 40
		wantLex, wantDense := make([][]backend.Hit, n), make([][]backend.Hit, n)
		for i := range n {
			// Dense rankings compared across replicas must be exact: each replica builds its
			// own graph, so two replicas' HNSW answers may differ by design.
			got, err := lr.hybrid(ctx, backend.LexicalQuery{Terms: lexQueries[i], N: 10}, backend.VectorQuery{Vector: queryVecs[i], K: 10, Exact: true})
			if err != nil {
				t.Fatal(err)
			}
			wantLex[i], wantDense[i] = got.Lexical, got.Dense
		}
		var (
			mu                        sync.Mutex
			failed, changed           []string
			done, afterKill, inFlight atomic.Int64
			killed                    atomic.Bool
			wg                        sync.WaitGroup
		)
		stop := make(chan struct{})
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					j := i % n
					inFlight.Add(1)
					got, err := lr.hybrid(ctx, backend.LexicalQuery{Terms: lexQueries[j], N: 10}, backend.VectorQuery{Vector: queryVecs[j], K: 10, Exact: true})
					inFlight.Add(-1)
					done.Add(1)
					if killed.Load() {
						afterKill.Add(1)
					}
					mu.Lock()
					switch {
					case err != nil:
						failed = append(failed, err.Error())
					case !reflect.DeepEqual(got.Lexical, wantLex[j]) || !reflect.DeepEqual(got.Dense, wantDense[j]):
						changed = append(changed, fmt.Sprintf("query %d: %v / %v, before %v / %v", j, hitKeys(got.Lexical), hitKeys(got.Dense), hitKeys(wantLex[j]), hitKeys(wantDense[j])))
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Second)
		killed.Store(true)
		flying := inFlight.Load()
		c.Kill(2)
		time.Sleep(3 * time.Second)
		c.Restart(t, 2) // the loop runs on while the peer rejoins
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()
		t.Logf("%d hybrid queries, %d after peer 2 was killed (%d in flight at the kill), %d failed, %d changed", done.Load(), afterKill.Load(), flying, len(failed), len(changed))
		if len(failed) > 0 {
			t.Errorf("%d failed queries, first: %s", len(failed), failed[0])
		}
		if len(changed) > 0 {
			t.Errorf("%d queries ranked differently from before the kill, first: %s", len(changed), changed[0])
		}
		if afterKill.Load() == 0 {
			t.Fatalf("no query ran after the kill: the fault was not exercised")
		}
		waitCaughtUp(t, e, genA)
	})

	// An update (a generation derived from a base of 3,000 passages: 100 deletions, 1,500
	// additions) with peers killed while its third batch's upserts are in flight. With one peer down every shard
	// keeps a replica, so the update must complete; with two down some shards have none, so
	// it must fail, naming the host and collection, and a rerun after the restarts must
	// complete. Either way the restarted peers catch up and Verify passes.
	// The large generation goes first: a restarted peer recovers every collection it holds,
	// and these checks need no graph.
	if err := e.Drop(ctx, genA); err != nil {
		t.Fatal(err)
	}
	const nBase, added = 3000, 1500
	genS := backend.Gen{Name: "g-000010"}
	writeLexical(t, e.Lexical(), genS, ps[:nBase])
	if err := writeVectors(t, e, genS, nil, seq(0, nBase), vecs[:nBase]); err != nil {
		t.Fatal(err)
	}
	lrS, err := e.OpenLexical(ctx, e.Collection(genS.Name), backend.Scoring{})
	if err != nil {
		t.Fatal(err)
	}
	vrS, err := e.OpenVectors(ctx, e.Collection(genS.Name))
	if err != nil {
		t.Fatal(err)
	}
	update := func(t *testing.T, e *Engine, gen backend.Gen, kill []int) error {
		w, err := e.Lexical().Begin(ctx, gen, &genS, backend.LexicalBegin{Analyzer: "en"})
		if err != nil {
			return err
		}
		for b := 0; b < 4; b++ {
			batch := w.NewBatch()
			if b == 0 {
				for k := 0; k < 100; k++ {
					batch.Delete(uint32(k), nil)
				}
			} else {
				for k := nBase + (b-1)*500; k < nBase+b*500; k++ {
					if err := batch.Add(uint32(k), &ps[k%len(ps)]); err != nil {
						return err
					}
				}
			}
			var killed chan struct{}
			if len(kill) > 0 && b == 2 {
				killed = make(chan struct{})
				go func() {
					defer close(killed)
					time.Sleep(20 * time.Millisecond)
					for _, i := range kill {
						c.Kill(i)
					}
				}()
			}
			t0 := time.Now()
			err := w.Apply(ctx, batch)
			if killed != nil {
				<-killed
				t.Logf("batch %d: peers %v killed 20ms into an Apply that took %v (%v)", b, kill, time.Since(t0).Round(time.Millisecond), err)
			}
			if err != nil {
				w.Abort()
				return err
			}
		}
		if _, err := w.Commit(ctx, backend.CommitOptions{}); err != nil {
			return err
		}
		return writeVectors(t, e, gen, vrS, seq(nBase, nBase+added), clustered(added, robustDim, 100, 99))
	}
	for _, tc := range []struct {
		name     string
		gen      backend.Gen
		kill     []int
		mustFail bool
	}{
		{"one peer killed during an update", backend.Gen{Name: "g-000002"}, []int{1}, false},
		{"two peers killed during an update", backend.Gen{Name: "g-000003"}, []int{1, 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if raceEnabled && tc.mustFail {
				t.Skip("race pass: the ordinary pass runs the failing update and its rerun")
			}
			// Few, short retries: a write to a shard with no live replica fails in seconds.
			ew := newEngine(t, c, "kr", Options{Dim: robustDim, HNSW: hnswOpts, Retries: 2, Backoff: 100 * time.Millisecond, Timeout: 10 * time.Second})
			start := time.Now()
			err := update(t, ew, tc.gen, tc.kill)
			t.Logf("update with peers %v killed during it: %v after %v", tc.kill, err, time.Since(start).Round(time.Millisecond))
			switch {
			case err == nil && tc.mustFail:
				t.Fatalf("the update completed with shards that had no live replica")
			case err != nil && !tc.mustFail:
				t.Fatalf("the update failed with every shard keeping a replica: %v", err)
			case err != nil && (!strings.Contains(err.Error(), "qdrant grpc://127.0.0.1:") || !strings.Contains(err.Error(), ew.Collection(tc.gen.Name))):
				t.Fatalf("the update failed without naming the host and collection: %v", err)
			}
			start = time.Now()
			c.Restart(t, tc.kill...)
			waitCaughtUp(t, e, genS)
			if err != nil {
				// Restarted peers rejoin consensus after they answer, so a deletion can time
				// out for a few seconds more; the drop is retried for a bounded time. (CI's
				// stop 36 saw every retry fail with "failed to delete collection": Qdrant
				// answers false for a collection that a timed-out first attempt had deleted,
				// which Drop now takes for done; TestGenerations checks it.)
				deadline := time.Now().Add(60 * time.Second)
				for err := e.Drop(ctx, tc.gen); err != nil; err = e.Drop(ctx, tc.gen) {
					if time.Now().After(deadline) {
						t.Fatal(err)
					}
					t.Logf("drop after the restarts: %v; retrying", err)
					time.Sleep(time.Second)
				}
				if err := update(t, e, tc.gen, nil); err != nil {
					t.Fatalf("rerun of the update after the restarts: %v", err)
				}
			}
			waitCaughtUp(t, e, tc.gen)
			t.Logf("peers %v restarted: every replica active, with its shard's points, %v later", tc.kill, time.Since(start).Round(time.Millisecond))
			want := nBase - 100 + added
			got, err := e.Verify(ctx, tc.gen)
			if err != nil || got != (Counts{Passages: want, Dense: want, BM25: want}) {
				t.Fatalf("Verify after the update = %+v %v, want %d passages with both vectors", got, err, want)
			}
			has, err := lrS.Has(ctx, []uint32{0, 99, 100, nBase})
			if err != nil || !reflect.DeepEqual(has, []bool{true, true, true, false}) {
				t.Fatalf("the base generation changed: Has = %v %v", has, err)
			}
			lrB, err := e.OpenLexical(ctx, e.Collection(tc.gen.Name), backend.Scoring{})
			if err != nil {
				t.Fatal(err)
			}
			has, err = lrB.Has(ctx, []uint32{0, 99, 100, nBase, nBase + added - 1, nBase + added})
			if err != nil || !reflect.DeepEqual(has, []bool{false, false, true, true, true, false}) {
				t.Fatalf("the update's passages: Has = %v %v", has, err)
			}
			if err := e.Drop(ctx, tc.gen); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitCaughtUp waits until every shard of gen's collection has all its replicas active and
// holding the same number of points, asking each peer for its local shards: a restarted peer
// has caught up by itself.
func waitCaughtUp(t *testing.T, e *Engine, gen backend.Gen) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var why string
		type replica struct {
			peer   int
			points uint64
		}
		shards := map[uint32][]replica{}
		for i, cl := range e.clients {
			info, err := cl.GetCollectionClusterInfo(ctx, e.Collection(gen.Name))
			if err != nil {
				why = fmt.Sprintf("peer %d: %v", i, err)
				break
			}
			for _, s := range info.GetLocalShards() {
				if s.GetState() != qdrant.ReplicaState_Active {
					why = fmt.Sprintf("peer %d shard %d: %v", i, s.GetShardId(), s.GetState())
				}
				shards[s.GetShardId()] = append(shards[s.GetShardId()], replica{i, s.GetPointsCount()})
			}
		}
		if why == "" {
			if len(shards) != int(e.opts.Shards) {
				why = fmt.Sprintf("%d shards, want %d", len(shards), e.opts.Shards)
			}
			for id, rs := range shards {
				if want := e.replicationFactor(ctx); len(rs) != int(want) {
					why = fmt.Sprintf("shard %d: %d replicas, want %d", id, len(rs), want)
				}
				for _, r := range rs[1:] {
					if r.points != rs[0].points {
						why = fmt.Sprintf("shard %d: %d points on peer %d, %d on peer %d", id, r.points, r.peer, rs[0].points, rs[0].peer)
					}
				}
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("collection %s not caught up 90s after the restart: %s", e.Collection(gen.Name), why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
