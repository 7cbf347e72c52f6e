package backend_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// What an engine does that others do not is reported by its commit (backend.LexicalCommit,
// VectorCommit, PassageCommit) or asked by its Begin's options, not found by probing it for
// an interface: the driver trusts these results, so each engine is held here to the ones it
// fills. The files a writer says it hashed are on disk with those sizes and sums; the
// graph's commit reports its parameters, as the manifest records them, and a reader of the
// graph still in memory; the postings' and bleve's readers check what they keep beside their
// index. (Qdrant's vector commit, which reports nothing local, is held to that on a real
// cluster in its package's tests.)
func TestCommitResults(t *testing.T) {
	ctx := context.Background()
	ps := make([]corpus.Passage, 30)
	for i := range ps {
		ps[i] = corpus.Passage{ID: fmt.Sprintf("d%d#0", i), DocID: fmt.Sprintf("d%d", i), Title: "T", Text: fmt.Sprintf("passage %d about topic %d and cells", i, i%7)}
	}
	checkFiles := func(t *testing.T, dir string, files []backend.CommittedFile, want int) {
		t.Helper()
		if len(files) != want {
			t.Fatalf("%d files reported, want %d: %+v", len(files), want, files)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(b); int64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
				t.Errorf("%s: reported %d bytes %s, the file has %d, %x", f.Path, f.Size, f.SHA256, len(b), sum)
			}
		}
	}

	t.Run("passages", func(t *testing.T) {
		g := backend.Gen{Name: "g-000001", Dir: t.TempDir()}
		w, err := kpst.Engine{}.Begin(ctx, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ps {
			if err := w.Add(ctx, uint32(i), &ps[i]); err != nil {
				t.Fatal(err)
			}
		}
		c, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Layout.Live != len(ps) || c.Layout.NextKey() != uint32(len(ps)) {
			t.Errorf("layout %+v for %d passages", c.Layout, len(ps))
		}
		checkFiles(t, g.Dir, c.Files, 1) // the segment; the tombstones are small and hashed after
	})

	for _, tc := range []struct {
		name  string
		eng   backend.Lexical
		files int // hashed as written
	}{
		{"postings", postingsbm25.Engine{}, 1},
		{"bleve", blevebm25.Engine{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := backend.Gen{Name: "g-000001", Dir: t.TempDir()}
			w, err := tc.eng.Begin(ctx, g, nil, backend.LexicalBegin{Analyzer: "en"})
			if err != nil {
				t.Fatal(err)
			}
			b := w.NewBatch()
			for i := range ps {
				if err := b.Add(uint32(i), &ps[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
			c, err := w.Commit(ctx, backend.CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Docs != len(ps) || c.TokensAdded == 0 {
				t.Errorf("commit %+v for %d passages", c, len(ps))
			}
			checkFiles(t, g.Dir, c.Files, tc.files)
			r, err := tc.eng.Open(ctx, g, backend.Scoring{Params: backend.DefaultBM25(), Stats: backend.CollectionStats{Docs: c.Docs, Tokens: c.TokensAdded}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Check(ctx); err != nil {
				t.Errorf("Check of a clean part: %v", err)
			}
		})
	}

	t.Run("graph", func(t *testing.T) {
		params := hnsw.Options{M: 8, EfConstruction: 32, EfSearch: 40, Seed: 3, Workers: 1}
		eng := hnswvec.Engine{Params: params}
		for _, checkpoint := range []bool{false, true} {
			g := backend.Gen{Name: "g-000001", Dir: t.TempDir()}
			w, err := eng.Begin(ctx, g, 4, nil, backend.VectorBegin{Expect: len(ps)})
			if err != nil {
				t.Fatal(err)
			}
			keys := make([]uint32, len(ps))
			vecs := make([][]float32, len(ps))
			for i := range ps {
				keys[i], vecs[i] = uint32(i), []float32{float32(i), 1, float32(i % 3), 2}
			}
			if err := w.Add(ctx, keys, vecs); err != nil {
				t.Fatal(err)
			}
			repairs := 0
			c, err := w.Commit(ctx, backend.CommitOptions{Checkpoint: checkpoint, Progress: func(int, int) { repairs++ }})
			if err != nil {
				t.Fatal(err)
			}
			checkFiles(t, g.Dir, c.Files, 1)
			var got hnsw.Options
			if err := json.Unmarshal(c.Params, &got); err != nil || got.M != params.M || got.EfConstruction != params.EfConstruction ||
				got.EfSearch != params.EfSearch || got.Seed != params.Seed {
				t.Errorf("checkpoint %v: params %s (%v), want those of %+v", checkpoint, c.Params, err, params)
			}
			if c.Reopen == nil {
				t.Fatalf("checkpoint %v: no reader of the graph in memory", checkpoint)
			}
			if r := c.Reopen(nil); r.Len() != len(ps) || r.Dim() != 4 {
				t.Errorf("checkpoint %v: the reopened graph holds %d vectors of dim %d", checkpoint, r.Len(), r.Dim())
			}
			if checkpoint && repairs != 0 {
				t.Errorf("a checkpoint's commit reported %d repair steps: it leaves the pass to the final commit", repairs)
			}
			w.Abort()
		}
	})
}
