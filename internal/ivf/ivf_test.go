package ivf

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// clustered returns n unit vectors of dim around centres centres (seeded): a cluster structure
// like an encoder's, which is what lists are for.
func clustered(n, dim, centres int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = make([]float32, dim)
		for d := range cs[i] {
			cs[i][d] = float32(rng.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := cs[rng.IntN(centres)]
		v := make([]float32, dim)
		for d := range v {
			v[d] = c[d] + 0.7*float32(rng.NormFloat64())
		}
		normalize(v, v)
		out[i] = v
	}
	return out
}

func seqKeys(first, n int) []uint32 {
	k := make([]uint32, n)
	for i := range k {
		k[i] = uint32(first + i)
	}
	return k
}

// build adds vecs under keys from 0 in batches and commits.
func build(t testing.TB, dir string, vecs [][]float32, o Options, expect int) *Reader {
	t.Helper()
	return buildWith(t, dir, vecs, o, expect, nil)
}

// buildWith is build with the new writer given to adjust first (when not nil).
func buildWith(t testing.TB, dir string, vecs [][]float32, o Options, expect int, adjust func(*Writer)) *Reader {
	t.Helper()
	ctx := context.Background()
	w, err := Create(dir, len(vecs[0]), o, expect)
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(w)
	}
	for i := 0; i < len(vecs); i += 300 {
		j := min(len(vecs), i+300)
		if err := w.Add(ctx, seqKeys(i, j-i), vecs[i:j]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(ctx, true, nil); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// recall is the share of exact's keys that got finds.
func recall(got, exact []Result) float64 {
	n := 0
	for _, e := range exact {
		for _, g := range got {
			if g.Key == e.Key {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(exact))
}

// TestSearch: searches find what exact search finds, more of it as they probe more lists; a
// search of every list with every candidate rescored is exact search, scores included.
func TestSearch(t *testing.T) {
	vecs := clustered(4000, 48, 40, 1)
	queries := clustered(50, 48, 40, 2)
	for _, tc := range []struct {
		name   string
		o      Options
		expect int
	}{
		{"lists from the expected count (two-level k-means)", Options{}, 4000},
		{"trained at the final commit (one-level k-means)", Options{Lists: 32}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(t, t.TempDir(), vecs, tc.o, tc.expect)
			if !r.h.Trained() || r.Options().Lists < 2 || r.Len() != len(vecs) || r.Live() != len(vecs) {
				t.Fatalf("index of %d vectors: trained %v, %d lists, len %d, live %d", len(vecs), r.h.Trained(), r.Options().Lists, r.Len(), r.Live())
			}
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
			lists := r.Options().Lists
			var low, high, exhaustive float64
			for _, q := range queries {
				exact, err := r.Exact(q, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				few, err := r.Search(q, 10, SearchOptions{Probe: 1, Rescore: 10}, nil)
				if err != nil {
					t.Fatal(err)
				}
				many, err := r.Search(q, 10, SearchOptions{Probe: lists / 2, Rescore: 400}, nil)
				if err != nil {
					t.Fatal(err)
				}
				all, err := r.Search(q, 10, SearchOptions{Probe: lists, Rescore: len(vecs)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				// Rescoring stops by the codes' error bounds, which hold with high
				// probability: nearly every exact neighbour, with its exact score.
				exhaustive += recall(all, exact) / float64(len(queries))
				for _, h := range all {
					if want := exactScoreOf(r, q, h.Key); h.Score != want {
						t.Fatalf("key %d scored %v, exactly %v", h.Key, h.Score, want)
					}
				}
				low += recall(few, exact) / float64(len(queries))
				high += recall(many, exact) / float64(len(queries))
			}
			if exhaustive < 0.99 {
				t.Errorf("recall@10 with every list probed and every candidate rescored: %.3f", exhaustive)
			}
			if high < 0.95 || low >= high {
				t.Errorf("recall@10 probing 1 list %.3f, half of %d lists %.3f: want the second above 0.95 and above the first", low, lists, high)
			}
		})
	}
}

// exactScoreOf is the exact score of key for q.
// TestGraphProbe holds the lists found through the graph over the centroids (an index of more
// than bruteProbeBelow lists) to those found by comparing the query with every centroid: the
// beam (graphBeam) must find nearly all of the nearest lists. Here a beam of the probe alone
// found 0.979 of them, three times the probe 0.995.
func TestGraphProbe(t *testing.T) {
	vecs := clustered(6000, 64, 60, 3)
	queries := clustered(100, 64, 60, 4)
	r := build(t, t.TempDir(), vecs, Options{Lists: 512}, 0)
	const probe = 64
	s := r.getScratch()
	defer r.pool.Put(s)
	found, want := 0, 0
	for _, q := range queries {
		normalize(s.q, q)
		brute := slices.Clone(r.probeLists(s, probe))
		r.bruteProbeBelow = 0
		graph := r.probeLists(s, probe)
		r.bruteProbeBelow = bruteProbeBelow
		if len(graph) != probe || len(brute) != probe {
			t.Fatalf("%d lists through the graph, %d by comparing every centroid, want %d", len(graph), len(brute), probe)
		}
		for _, l := range brute {
			if slices.Contains(graph, l) {
				found++
			}
		}
		want += probe
	}
	if share := float64(found) / float64(want); share < 0.99 {
		t.Errorf("the graph found %.3f of the %d nearest lists, want at least 0.99", share, probe)
	}
}

func exactScoreOf(r *Reader, q []float32, key uint32) float32 {
	p, _ := r.position(key)
	qn := make([]float32, len(q))
	normalize(qn, q)
	inv, code := splitRecord(r.record(p))
	return dotI8(qn, code) * inv
}

// TestCanonical: a vector's canonical form quantizes to itself, so an index rebuilt from the
// vectors it returns scores exactly as the first.
func TestCanonical(t *testing.T) {
	for i, v := range clustered(200, 37, 5, 3) {
		code := make([]byte, len(v))
		inv := quantize(code, v)
		canon := make([]float32, len(v))
		dequantize(canon, code, inv)
		normalize(canon, canon)
		code2 := make([]byte, len(v))
		if inv2 := quantize(code2, canon); inv2 != inv || !bytes.Equal(code, code2) {
			t.Fatalf("vector %d: requantized to %v (inverse norm %v), first %v (%v)", i, code2, inv2, code, inv)
		}
	}
}

// TestRotation: the rotation keeps lengths and inner products (it is orthogonal).
func TestRotation(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	signs := make([]byte, 3*128)
	for i := range signs {
		signs[i] = byte(rng.IntN(2))
	}
	rot := newRotation(128, signs)
	vs := clustered(2, 100, 2, 5)
	a, b := make([]float32, 128), make([]float32, 128)
	rot.apply(a, vs[0])
	rot.apply(b, vs[1])
	if d := math.Abs(float64(dot(a, a)) - 1); d > 1e-5 {
		t.Errorf("|Pv|^2 = %v, want 1", dot(a, a))
	}
	if d := math.Abs(float64(dot(a, b) - dot(vs[0], vs[1]))); d > 1e-5 {
		t.Errorf("<Pu,Pv> = %v, <u,v> = %v", dot(a, b), dot(vs[0], vs[1]))
	}
}

// epsilon scales a code's error bound (RaBitQ's epsilon_0, in standard deviations of the
// estimate's error). RaBitQ's 1.9 left 1.6% of the estimates of 3,000 256-d vectors outside
// it; 3 leaves about 0.1%.
const epsilon = 3

// errorScale is the standard deviation of sum sign(r_i) e_i, e_i the quantization errors of
// the query (uniform over a step of dl): an estimate's bound adds a multiple of it times the
// code's scale, as the rounding of the query adds to the error of the code.
func (qc *queryCode) errorScale() float32 {
	return qc.dl * float32(math.Sqrt(float64(qc.dpad)/12))
}

// TestEstimateBound: the estimate of an inner product from a code is within epsilon times its
// bound of the truth nearly always, and unbiased.
func TestEstimateBound(t *testing.T) {
	const dim = 256
	vs := clustered(3000, dim, 10, 6)
	rng := rand.New(rand.NewPCG(6, 6))
	signs := make([]byte, 3*dim)
	for i := range signs {
		signs[i] = byte(rng.IntN(2))
	}
	rot := newRotation(dim, signs)
	c := make([]float32, dim)
	for _, v := range vs[:100] {
		for d := range c {
			c[d] += v[d] / 100
		}
	}
	pc := make([]float32, dim)
	rot.apply(pc, c)
	q, pq := vs[0], make([]float32, dim)
	rot.apply(pq, q)
	var qc queryCode
	qc.prepare(pq, dim/64)
	cq := dot(pq, pc)
	qn := float32(math.Sqrt(float64(1 - 2*cq + dot(pc, pc))))
	out, bias := 0, 0.0
	code, po := make([]uint64, dim/64), make([]float32, dim)
	for _, v := range vs[1:] {
		rot.apply(po, v)
		s, b, e := encodeCode(code, po, pc)
		est := cq + b + s*qc.dotSigns(code)
		truth := dot(q, v)
		if math.Abs(float64(est-truth)) > float64(epsilon*(e*qn+s*qc.errorScale())) {
			out++
		}
		bias += float64(est-truth) / float64(len(vs)-1)
	}
	if out > len(vs)/200 || math.Abs(bias) > 0.01 {
		t.Errorf("%d of %d estimates outside their bound, mean error %.4f", out, len(vs)-1, bias)
	}
}

// sums returns the sha256 of every file in dir.
func sums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

// TestUpdate: an index derived from another shares its files by hard link and leaves them
// unchanged; added vectors are found, deleted ones are neither found nor counted; updates add
// list segments, merged into one when they grow past maxSegs.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	vecs := clustered(3000, 32, 20, 7)
	root := t.TempDir()
	base := filepath.Join(root, "g1")
	r := build(t, base, vecs[:2000], Options{}, 2000)
	before := sums(t, base)
	dir := base
	next := 2000
	for round := range maxSegs + 1 {
		nd := filepath.Join(root, "g"+string(rune('2'+round)))
		w, err := Derive(nd, r, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !w.Delete(uint32(round*7)) || w.Delete(uint32(round*7)) || w.Delete(99999) {
			t.Fatalf("round %d: deleting key %d twice, then a key the index lacks", round, round*7)
		}
		if err := w.Add(ctx, seqKeys(next, 100), vecs[next:next+100]); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(ctx, []uint32{5}, vecs[:1]); err == nil {
			t.Fatal("adding key 5 after larger keys: no error")
		}
		next += 100
		if _, err := w.Commit(ctx, true, nil); err != nil {
			t.Fatal(err)
		}
		if r, err = Open(nd, OpenOptions{}); err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		dir = nd
		if r.Len() != next || r.Live() != next-round-1 {
			t.Fatalf("round %d: len %d live %d, want %d and %d", round, r.Len(), r.Live(), next, next-round-1)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		if segs := len(r.h.Lists); segs > maxSegs {
			t.Fatalf("round %d: %d list segments", round, segs)
		}
	}
	if len(r.h.Lists) != 2 {
		t.Errorf("after %d updates: %d list segments, want the merged one and the last update's", maxSegs+1, len(r.h.Lists))
	}
	if got := sums(t, base); !reflectEqual(got, before) {
		t.Errorf("the base index's files changed")
	}
	for round := range maxSegs + 1 {
		k := uint32(round * 7)
		if r.Has(k) {
			t.Errorf("deleted key %d is live", k)
		}
		hits, _ := r.Search(vecs[k], 10, SearchOptions{Probe: 1000, Rescore: 3000}, nil)
		for _, h := range hits {
			if h.Key == k {
				t.Errorf("deleted key %d found", k)
			}
		}
	}
	for _, k := range []uint32{1, 2500, uint32(next - 1)} {
		v, ok := r.Vector(k)
		if !ok {
			t.Fatalf("key %d has no vector", k)
		}
		hits, _ := r.Search(v, 1, SearchOptions{}, nil)
		if len(hits) != 1 || hits[0].Key != k || hits[0].Score < 0.9999 {
			t.Errorf("key %d's own vector finds %v", k, hits)
		}
	}
	_ = dir
}

func reflectEqual(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestResume: a build committed as a checkpoint part way (before and after the centroids are
// trained) and continued by a writer that adopts it ends with the lists of a build that was
// not interrupted, byte for byte, and the same searches.
func TestResume(t *testing.T) {
	ctx := context.Background()
	vecs := clustered(3000, 40, 20, 8)
	clean := build(t, filepath.Join(t.TempDir(), "clean"), vecs, Options{Sample: 1000}, 3000)
	for _, cut := range []int{600, 1800} {
		root := t.TempDir()
		w, err := Create(filepath.Join(root, "a"), 40, Options{Sample: 1000}, 3000)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < cut; i += 300 {
			if err := w.Add(ctx, seqKeys(i, 300), vecs[i:i+300]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx, false, nil); err != nil {
			t.Fatal(err)
		}
		cp, err := Open(filepath.Join(root, "a"), OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cp.h.Trained() != (cut > 1000) {
			t.Fatalf("checkpoint after %d vectors: trained %v", cut, cp.h.Trained())
		}
		w, err = Derive(filepath.Join(root, "b"), cp, true, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := cut; i < len(vecs); i += 300 {
			if err := w.Add(ctx, seqKeys(i, 300), vecs[i:i+300]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx, true, nil); err != nil {
			t.Fatal(err)
		}
		r, err := Open(filepath.Join(root, "b"), OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if len(r.h.Lists) != 1 {
			t.Fatalf("resumed build has %d list segments", len(r.h.Lists))
		}
		a, _ := os.ReadFile(filepath.Join(clean.dir, clean.h.Lists[0].Name))
		b, _ := os.ReadFile(filepath.Join(r.dir, r.h.Lists[0].Name))
		ca, _ := os.ReadFile(filepath.Join(clean.dir, clean.h.Centroids))
		cb, _ := os.ReadFile(filepath.Join(r.dir, r.h.Centroids))
		if !bytes.Equal(a, b) || !bytes.Equal(ca, cb) {
			t.Errorf("cut at %d: the resumed build's lists or centroids differ from the clean build's", cut)
		}
		for _, q := range vecs[:20] {
			x, _ := clean.Search(q, 10, SearchOptions{}, nil)
			y, _ := r.Search(q, 10, SearchOptions{}, nil)
			if !slices.Equal(x, y) {
				t.Errorf("cut at %d: searches differ:\n%v\n%v", cut, x, y)
			}
		}
	}
}

// TestFilteredRecall: a filter that keeps 1% of the vectors keeps recall: the search scores the
// passing vectors rather than hoping some of the nearest pass.
func TestFilteredRecall(t *testing.T) {
	vecs := clustered(20000, 32, 50, 9)
	r := build(t, t.TempDir(), vecs, Options{}, len(vecs))
	queries := clustered(30, 32, 50, 10)
	for _, share := range []int{2, 10, 100} {
		keep := func(k uint32) bool { return (k*2654435761)%uint32(share) == 0 }
		var rec float64
		for _, q := range queries {
			exact, _ := r.Exact(q, 10, keep)
			got, err := r.Search(q, 10, SearchOptions{}, keep)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range got {
				if !keep(h.Key) {
					t.Fatalf("1/%d filter: key %d does not pass", share, h.Key)
				}
			}
			rec += recall(got, exact) / float64(len(queries))
		}
		if rec < 0.9 {
			t.Errorf("filter keeping 1/%d: recall@10 %.3f", share, rec)
		}
	}
}

// TestFilteredRecallAtSmallProbes: a filter costs at most a tenth of the recall the same probe
// finds without it, also at the small probes where probe/sqrt(share) lists hold too few
// passing vectors near the query.
func TestFilteredRecallAtSmallProbes(t *testing.T) {
	// Many small clusters, the queries drawn among them: a query's nearest vectors share one
	// list, its nearest passing vectors are spread over the lists of the clusters around.
	all := clustered(20040, 32, 2000, 9)
	vecs, queries := all[:20000], all[20000:]
	r := build(t, t.TempDir(), vecs, Options{}, len(vecs))
	keep := func(k uint32) bool { return (k*2654435761)%10 == 0 }
	for _, probe := range []int{1, 2, 4} {
		o := SearchOptions{Probe: probe, Rescore: 40}
		var plain, filtered float64
		for _, q := range queries {
			exact, _ := r.Exact(q, 10, nil)
			got, err := r.Search(q, 10, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			plain += recall(got, exact) / float64(len(queries))
			exact, _ = r.Exact(q, 10, keep)
			if got, err = r.Search(q, 10, o, keep); err != nil {
				t.Fatal(err)
			}
			filtered += recall(got, exact) / float64(len(queries))
		}
		if filtered < 0.9*plain {
			t.Errorf("probe %d: recall@10 %.3f with a filter keeping 1/10, %.3f without", probe, filtered, plain)
		}
	}
}

// TestFilterNarrowerThanItsSample: a filter keeping 30 of 100,000 vectors, none of them among
// the first positions sampled, finds all k of its nearest passing vectors, where probing the
// lists that a guess of the share asks for missed most of them.
func TestFilterNarrowerThanItsSample(t *testing.T) {
	vecs := clustered(100000, 16, 200, 11)
	r := build(t, t.TempDir(), vecs, Options{Lists: 1024, Probe: 1, Rescore: 10}, len(vecs))
	sampled := map[uint32]bool{}
	for i := range uint64(selectivitySample) {
		sampled[r.key(uint32(splitmix(i)%uint64(r.h.Len())))] = true
	}
	pass := map[uint32]bool{}
	for k := uint32(7); len(pass) < 30; k += 3331 {
		if !sampled[k] {
			pass[k] = true
		}
	}
	keep := func(k uint32) bool { return pass[k] }
	if s, want := r.selectivity(keep), 30.0/100000; s < want/2 || s > want*2 {
		t.Errorf("share estimated at %g, %g pass", s, want)
	}
	for i, q := range clustered(20, 16, 200, 12) {
		exact, _ := r.Exact(q, 10, keep)
		got, err := r.Search(q, 10, SearchOptions{}, keep)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 || recall(got, exact) < 1 {
			t.Fatalf("query %d: %d hits, recall@10 %.2f against scoring every passing vector", i, len(got), recall(got, exact))
		}
	}
}

// TestScanFiltered: asking the filter of the best estimates only gathers the candidates that
// asking it of every vector scanned gathers, with fewer questions when the filter passes
// vectors unrelated to the query; and one that passes only vectors far from the query, whose
// best estimates hold too few, still gathers them all.
func TestScanFiltered(t *testing.T) {
	vecs := clustered(20000, 32, 50, 9)
	r := build(t, t.TempDir(), vecs, Options{}, len(vecs))
	queries := clustered(20, 32, 50, 10)
	lists := r.h.Options.Lists
	for _, tc := range []struct {
		name        string
		probe, want int
		keep        func(q []float32) func(uint32) bool
		// fewer: the questions asked at most this share of those asked of every vector.
		fewer float64
	}{
		{"1 in 10", lists / 2, 40, func([]float32) func(uint32) bool { return func(k uint32) bool { return (k*2654435761)%10 == 0 } }, 0.8},
		{"1 in 100", lists, 10, func([]float32) func(uint32) bool { return func(k uint32) bool { return (k*2654435761)%100 == 0 } }, 0.8},
		{"far from the query", lists / 2, 40, func(q []float32) func(uint32) bool {
			return func(k uint32) bool { return dot(q, vecs[k]) < 0 && k%4 == 0 }
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked, askedAll := 0, 0
			for _, q := range queries {
				keep := tc.keep(q)
				s := r.getScratch()
				normalize(s.q, q)
				probed := r.probeLists(s, tc.probe)
				r.rot.apply(s.pq, s.q)
				s.qc.prepare(s.pq, r.words)
				r.scanLists(s, probed, tc.want, false, func(p uint32) bool { askedAll++; return keep(r.key(p)) })
				all := positions(s.cands)
				r.scanFiltered(s, probed, tc.want, false, r.selectivity(keep), func(k uint32) bool { asked++; return keep(k) })
				if got := positions(s.cands); !slices.Equal(got, all) {
					t.Fatalf("candidates %v, asking of every vector %v", got, all)
				}
				r.pool.Put(s)
			}
			if tc.fewer > 0 && float64(asked) > tc.fewer*float64(askedAll) {
				t.Errorf("asked the filter %d times, %d asking of every vector", asked, askedAll)
			}
		})
	}
}

func positions(c []cand) []uint32 {
	out := make([]uint32, len(c))
	for i, x := range c {
		out[i] = x.pos
	}
	slices.Sort(out)
	return out
}

// TestDamage: a damaged file is refused when it is opened, naming it.
func TestDamage(t *testing.T) {
	dir := t.TempDir()
	r := build(t, dir, clustered(1500, 24, 10, 11), Options{}, 1500)
	r.Close()
	for _, name := range append(r.h.Files(), HeadName) {
		if filepath.Ext(name) == graphSuffix {
			continue // internal/hnsw's format, checked by its loader
		}
		p := filepath.Join(dir, name)
		orig, _ := os.ReadFile(p)
		bad := slices.Clone(orig)
		bad[len(bad)/2] ^= 0x20
		os.WriteFile(p, bad, 0o644)
		_, err := Open(dir, OpenOptions{})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(name)) {
			t.Errorf("%s damaged: Open says %v", name, err)
		}
		os.WriteFile(p, orig, 0o644)
	}
	if r, err := Open(dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
}

// TestMergeChecksSegments: a list segment opened unchecked (larger than VerifyBelow) and damaged
// is refused when an update merges it, naming it, rather than copied into a merged segment whose
// new checksum would hide the damage.
func TestMergeChecksSegments(t *testing.T) {
	ctx := context.Background()
	vecs := clustered(2001, 24, 10, 13)
	root := t.TempDir()
	base := filepath.Join(root, "g1")
	build(t, base, vecs[:2000], Options{}, 2000).Close()
	r, err := Open(base, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seg := r.h.Lists[0].Name
	r.Close()
	p := filepath.Join(base, seg)
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 0x20
	os.WriteFile(p, b, 0o644)
	if r, err = Open(base, OpenOptions{VerifyBelow: 1}); err != nil {
		t.Fatalf("opened unchecked: %v", err)
	}
	w, err := Derive(filepath.Join(root, "g2"), r, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Add(ctx, []uint32{2000}, vecs[2000:]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, true, nil); err == nil || !strings.Contains(err.Error(), seg) {
		t.Fatalf("merging a damaged segment: %v, want an error naming %s", err, seg)
	}
}

// TestOlderListSegment: a list segment of version 1 (codes one after another, before the
// blocks) is refused with the command that rebuilds the index, not read as damage.
func TestOlderListSegment(t *testing.T) {
	dir := t.TempDir()
	r := build(t, dir, clustered(500, 24, 5, 3), Options{}, 500)
	r.Close()
	p := filepath.Join(dir, r.h.Lists[0].Name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[4:], 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "version 1") || !strings.Contains(err.Error(), "kairos index --force") || !strings.Contains(err.Error(), p) {
		t.Fatalf("a version 1 list segment: Open says %v", err)
	}
}

// TestDotI8: the assembly's inner product of a query with byte codes is the portable one's, up
// to the order of summation, at every length (the tail past a multiple of 8 included).
func TestDotI8(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	for _, n := range []int{1, 7, 8, 9, 24, 32, 33, 100, 256, 384, 1024} {
		q, c := make([]float32, n), make([]byte, n+3)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		for i := range c {
			c[i] = byte(rng.IntN(256))
		}
		got, want := dotI8(q, c), dotI8Generic(q, c)
		if d := math.Abs(float64(got - want)); d > 1e-4*(1+math.Abs(float64(want))) {
			t.Errorf("n %d: %v, portable %v", n, got, want)
		}
	}
}

// TestDotsI16 holds the probing kernel to the portable loop, and both to the exact inner
// product of the scaled query, at sizes the assembly takes (multiples of 16) and sizes it does
// not, with worst-case inputs (every byte -128 or 127) where a sum could leave an int32.
func TestDotsI16(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	for _, dim := range []int{8, 16, 48, 256, 1024, 4096} {
		for _, extreme := range []bool{false, true} {
			rows := 5
			v, c := make([]float32, dim), make([]byte, rows*dim)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
				if extreme {
					v[i] = 1
				}
			}
			for i := range c {
				c[i] = byte(rng.IntN(256))
				if extreme {
					c[i] = byte(0x81) // -127, the extreme of quantize's codes
				}
			}
			q := make([]int16, dim)
			quantize16(q, v)
			got, want := make([]int32, rows), make([]int32, rows)
			dotsI16(q, c, got)
			dotsI16Generic(q, c, want)
			if !slices.Equal(got, want) {
				t.Fatalf("dim %d extreme %v: %v, portable %v", dim, extreme, got, want)
			}
			for l := range rows {
				var exact int64
				for i := range q {
					exact += int64(q[i]) * int64(int8(c[l*dim+i]))
				}
				if int64(got[l]) != exact {
					t.Fatalf("dim %d extreme %v row %d: %d, exact %d", dim, extreme, l, got[l], exact)
				}
			}
		}
	}
}

// randomCands returns size candidates of normal estimates (or of estimates from values levels,
// values > 0), and a copy sorted best first.
func randomCands(rng *rand.Rand, size, values int) (c, sorted []cand) {
	c = make([]cand, size)
	for i := range c {
		c[i] = cand{est: float32(rng.NormFloat64()), pos: uint32(i)}
		if values > 0 {
			c[i].est = float32(rng.IntN(values))
		}
	}
	sorted = slices.Clone(c)
	slices.SortFunc(sorted, func(a, b cand) int { return cmp.Compare(b.est, a.est) })
	return c, sorted
}

// TestKeepBest checks the candidates' cut against a sort, with ties (estimates drawn from few
// values) and without.
func TestKeepBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	for _, tc := range []struct{ size, n, values int }{
		{1, 1, 0}, {2, 1, 0}, {10, 10, 0}, {640, 320, 0}, {640, 320, 3}, {641, 7, 2}, {1000, 999, 0},
	} {
		c, want := randomCands(rng, tc.size, tc.values)
		floor := keepBest(c, tc.n)
		if floor != want[tc.n-1].est {
			t.Errorf("%+v: floor %v, want %v", tc, floor, want[tc.n-1].est)
		}
		got := slices.Clone(c[:tc.n])
		slices.SortFunc(got, func(a, b cand) int { return cmp.Compare(b.est, a.est) })
		for i := range got {
			if got[i].est != want[i].est {
				t.Fatalf("%+v: kept estimates %v, want %v", tc, got[i].est, want[i].est)
			}
		}
	}
}

// TestCutCands: the cut keeps at least n candidates, every one of the n best, and only those
// above its floor, whether the sample's floor holds or the exact one replaces it (values from
// a few levels: the sample's floor then often keeps fewer than n).
func TestCutCands(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	for _, tc := range []struct{ size, n, values int }{
		{2, 1, 0}, {640, 320, 0}, {640, 512, 0}, {1830, 915, 0}, {1830, 915, 2}, {1830, 915, 5}, {4096, 100, 0}, {300, 299, 0}, {129, 64, 0},
	} {
		for range 20 {
			c, sorted := randomCands(rng, tc.size, tc.values)
			nth := sorted[tc.n-1].est
			kept, floor := cutCands(slices.Clone(c), tc.n)
			if len(kept) < tc.n || floor > nth {
				t.Fatalf("%+v: kept %d, floor %v, the n-th best %v", tc, len(kept), floor, nth)
			}
			in := map[uint32]bool{}
			for _, x := range kept {
				in[x.pos] = true
				if x.est < floor {
					t.Fatalf("%+v: kept %v below the floor %v", tc, x.est, floor)
				}
			}
			for _, x := range c {
				if x.est > nth && !in[x.pos] {
					t.Fatalf("%+v: dropped %v, above the n-th best %v", tc, x.est, nth)
				}
				if x.est > floor && !in[x.pos] {
					t.Fatalf("%+v: dropped %v, above the floor %v", tc, x.est, floor)
				}
			}
		}
	}
}

// TestExactMany: one pass for many queries finds what Exact finds for each, ties and order
// included, with a filter, deleted vectors, several chunks and any number of workers.
func TestExactMany(t *testing.T) {
	ctx := context.Background()
	vecs := clustered(5000, 24, 12, 11)
	root := t.TempDir()
	base := build(t, filepath.Join(root, "g1"), vecs[:3000], Options{}, 3000)
	w, err := Derive(filepath.Join(root, "g2"), base, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []uint32{3, 500, 2999} {
		w.Delete(k)
	}
	if err := w.Add(ctx, seqKeys(3000, 2000), vecs[3000:]); err != nil { // a second chunk
		t.Fatal(err)
	}
	if err := w.Add(ctx, []uint32{5000}, vecs[:1]); err != nil { // key 0's vector again: a tie
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, true, nil); err != nil {
		t.Fatal(err)
	}
	r, err := Open(filepath.Join(root, "g2"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	qs := append(clustered(40, 24, 12, 12), vecs[0])
	odd := func(key uint32) bool { return key%2 == 1 }
	for _, tc := range []struct {
		name    string
		k       int
		keep    func(uint32) bool
		workers int
	}{
		{"one worker", 10, nil, 1},
		{"three workers", 10, nil, 3},
		{"a filter", 7, odd, 2},
		{"k above the vectors kept", 6000, odd, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.ExactMany(ctx, qs, tc.k, tc.keep, tc.workers)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				want, err := r.Exact(q, tc.k, tc.keep)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got[i], want) {
					t.Fatalf("query %d: ExactMany %v\nExact %v", i, got[i][:min(5, len(got[i]))], want[:min(5, len(want))])
				}
			}
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.ExactMany(cancelled, qs, 10, nil, 2); err == nil {
		t.Error("a cancelled context: no error")
	}
	if _, err := r.ExactMany(ctx, [][]float32{make([]float32, 5)}, 10, nil, 2); err == nil {
		t.Error("a query of another dimension: no error")
	}
}

// TestAskRecords: an index whose files outgrow the memory it may count on asks for its
// candidates' pages together (OpenOptions.Memory), and finds what it finds otherwise, score
// for score.
func TestAskRecords(t *testing.T) {
	vecs := clustered(3000, 64, 30, 5)
	queries := clustered(40, 64, 30, 6)
	dir := t.TempDir()
	build(t, dir, vecs, Options{Lists: 32}, 0)
	tight, err := Open(dir, OpenOptions{Memory: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer tight.Close()
	big, err := Open(dir, OpenOptions{Memory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	if !tight.askRecords || big.askRecords {
		t.Fatalf("asking for pages together: %v with 4 KB, %v with 1 TB, want true and false", tight.askRecords, big.askRecords)
	}
	for _, q := range queries {
		o := SearchOptions{Probe: 8, Rescore: 200}
		want, err := big.Search(q, 10, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tight.Search(q, 10, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || len(got) != 10 {
			t.Fatalf("with the pages asked for together %v, without %v", got, want)
		}
	}
}
