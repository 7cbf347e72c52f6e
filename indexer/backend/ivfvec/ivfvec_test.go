package ivfvec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// meta gives every key a source and a date: key%100 < pct of them are "rare", and key%1000 <
// 10 are dated 2020 (1%), the rest 2010.
type meta struct{ pct uint32 }

func (m meta) Meta(_ context.Context, key uint32) (time.Time, string, error) {
	d := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	if key%1000 < 10 {
		d = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if key%100 < m.pct {
		return d, "rare", nil
	}
	return d, "common", nil
}

func (meta) Language(context.Context, uint32) (string, error)  { return "", nil }
func (meta) BlockType(context.Context, uint32) (string, error) { return "", nil }

// clustered returns n vectors of dim around 30 centres.
func clustered(rng *rand.Rand, n, dim int) [][]float32 {
	centres := make([][]float32, 30)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for d := range centres[i] {
			centres[i][d] = float32(rng.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[rng.IntN(len(centres))]
		out[i] = make([]float32, dim)
		for d := range out[i] {
			out[i][d] = c[d] + 0.8*float32(rng.NormFloat64())
		}
	}
	return out
}

func keysFrom(first, n int) []uint32 {
	k := make([]uint32, n)
	for i := range k {
		k[i] = uint32(first + i)
	}
	return k
}

// The engine through the backend seam: the files a commit reports are the files written, with
// their sums; filters that pass 2% and 1% of the passages find nearly the exact filtered top
// 10, deleted keys never; an update derived from the generation adds and deletes, sharing the
// base's files.
func TestEngine(t *testing.T) {
	ctx := context.Background()
	const n, dim, k = 20000, 64, 10
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := clustered(rng, n+500, dim)
	root := t.TempDir()
	g1 := backend.Gen{Name: "g-000001", Dir: filepath.Join(root, "g1")}
	w, err := Engine{}.Begin(ctx, g1, dim, nil, backend.VectorBegin{Expect: n})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 5000 {
		if err := w.Add(ctx, keysFrom(i, 5000), vecs[i:i+5000]); err != nil {
			t.Fatal(err)
		}
	}
	w.Delete(20) // a rare, dated key
	vc, err := w.Commit(ctx, backend.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vc.Index != Name || len(vc.Params) == 0 {
		t.Errorf("commit: index %q, params %s", vc.Index, vc.Params)
	}
	for _, f := range vc.Files {
		b, err := os.ReadFile(filepath.Join(g1.Dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); int64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: %d bytes, sha256 %x; the commit says %d, %s", f.Path, len(b), sum, f.Size, f.SHA256)
		}
	}
	m := meta{pct: 2}
	r, err := Engine{}.Open(ctx, g1, m)
	if err != nil {
		t.Fatal(err)
	}
	filters := []backend.Filter{
		{Sources: []string{"rare"}},
		{DateFrom: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, f := range filters {
		var recall float64
		const queries = 40
		for _, q := range clustered(rng, queries, dim) {
			got, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Exact: true, Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			exact := map[uint32]bool{}
			for _, h := range want {
				exact[h.Key] = true
			}
			for _, h := range got {
				d, src, _ := m.Meta(ctx, h.Key)
				if h.Key == 20 || (len(f.Sources) > 0 && src != "rare") || (!f.DateFrom.IsZero() && d.Before(f.DateFrom)) {
					t.Fatalf("filter %+v: hit %d is deleted or fails it", f, h.Key)
				}
				if exact[h.Key] {
					recall += 1.0 / (k * queries)
				}
			}
		}
		if recall < 0.9 {
			t.Errorf("filter %+v: recall@10 %.3f of the exact filtered top 10", f, recall)
		}
	}
	// Rescore reaches the index: rescoring only k of the estimates finds fewer of the exact
	// top k than rescoring many.
	var few, many float64
	for _, q := range clustered(rng, 40, dim) {
		exact, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Exact: true})
		if err != nil {
			t.Fatal(err)
		}
		in := map[uint32]bool{}
		for _, h := range exact {
			in[h.Key] = true
		}
		for rescore, sum := range map[int]*float64{k: &few, 1000: &many} {
			got, err := r.Search(ctx, backend.VectorQuery{Vector: q, K: k, Rescore: rescore})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range got {
				if in[h.Key] {
					*sum += 1.0 / (k * 40)
				}
			}
		}
	}
	if few >= many || many < 0.9 {
		t.Errorf("recall@10 rescoring %d: %.3f, rescoring 1000: %.3f; want the second above 0.9 and above the first", k, few, many)
	}
	if none, err := r.Search(ctx, backend.VectorQuery{Vector: vecs[0], K: k, Filter: backend.Filter{None: true}}); err != nil || len(none) != 0 {
		t.Errorf("a filter that passes nothing: %v, %v", none, err)
	}

	g2 := backend.Gen{Name: "g-000002", Dir: filepath.Join(root, "g2")}
	w, err = Engine{}.Begin(ctx, g2, dim, r, backend.VectorBegin{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // taken over: closing it releases nothing the writer holds
		t.Fatal(err)
	}
	if err := w.Add(ctx, keysFrom(n, 500), vecs[n:]); err != nil {
		t.Fatal(err)
	}
	w.Delete(7)
	if _, err := w.Commit(ctx, backend.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(g2.Dir, m)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.Len() != n+500 || r2.Live() != n+498 {
		t.Errorf("after the update: %d vectors, %d live; want %d and %d", r2.Len(), r2.Live(), n+500, n+498)
	}
	for _, key := range []uint32{7, 20} {
		if ok, _ := r2.Has(ctx, key); ok {
			t.Errorf("deleted key %d has a vector", key)
		}
	}
	hits, err := r2.Search(ctx, backend.VectorQuery{Vector: vecs[n+123], K: 1})
	if err != nil || len(hits) != 1 || hits[0].Key != uint32(n+123) {
		t.Errorf("an added vector finds %v, %v", hits, err)
	}
	if err := r2.Verify(); err != nil {
		t.Error(err)
	}
	// The base's vector chunk is the update's, by hard link.
	base, _ := os.Stat(filepath.Join(Dir(g1.Dir), "vectors-000001.ivfv"))
	linked, _ := os.Stat(filepath.Join(Dir(g2.Dir), "vectors-000001.ivfv"))
	if base == nil || linked == nil || !os.SameFile(base, linked) {
		t.Errorf("the update does not share the base's vector chunk")
	}
}
