// Package ivfvec is Kairos's local vector engine for large indexes: one inverted-file index
// (internal/ivf) per generation, in the generation's ivf/ directory. Its memory is bounded by
// the one-bit codes a search scans (about 44 bytes a 256-d vector, memory-mapped) and its build
// is linear in the number of vectors, where the HNSW graph (hnswvec) holds every vector's links
// and inserts each one by a search of the graph. A generation derived from another (an update,
// a build going on from its checkpoint) shares the other's immutable files by hard link: it
// adds a vector chunk and a list segment, and a deletion rewrites only the small deletions file.
//
// Filters are applied by the index's search (ivf.Reader.Search's keep), with the dates, sources,
// languages and block types of passages from the passage store (backend.Keeper): a narrow
// filter makes it probe more lists, and a filter that passes few passages makes it score every
// passing one.
//
// VectorQuery.Ef is, for this engine, the number of lists a search probes (0: the index's
// default, ivf.Options.Probe).
package ivfvec

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// Name is the directory of a generation that holds its index, and the name a manifest records
// for this engine's indexes (manifest.VectorIndexIVF).
const Name = "ivf"

// Dir returns the index directory of the generation at genDir.
func Dir(genDir string) string { return filepath.Join(genDir, Name) }

// Engine is the IVF vector engine; Params are the parameters of new indexes (a derived
// generation keeps its base's).
type Engine struct {
	Params ivf.Options
}

var _ backend.Vectors = Engine{}

// Begin starts gen's index: new for vectors of dim, or derived from base, a *Reader of this
// engine, which Begin takes over (base must not be searched afterwards). o.Adopt says base is
// the build's own checkpoint, whose list segments the final commit merges; o.Expect, when set,
// chooses the number of lists and lets the centroids be trained as soon as their sample is in.
func (e Engine) Begin(ctx context.Context, gen backend.Gen, dim int, base backend.VectorReader, o backend.VectorBegin) (backend.VectorWriter, error) {
	dir := Dir(gen.Dir)
	if base != nil {
		r, ok := base.(*Reader)
		if !ok || r.r == nil {
			return nil, fmt.Errorf("ivfvec: cannot derive from %T", base)
		}
		w, err := ivf.Derive(dir, r.r, o.Adopt, e.Params.Workers)
		if err != nil {
			return nil, err
		}
		r.r = nil
		return &Writer{w: w, dir: dir}, nil
	}
	w, err := ivf.Create(dir, dim, e.Params, o.Expect)
	if err != nil {
		return nil, err
	}
	return &Writer{w: w, dir: dir}, nil
}

// Open opens gen's index, mapped: files up to backend.VerifyBudget are checked against their
// checksums as they are opened, larger ones by the manifest's sha256 (kairos verify).
func (Engine) Open(ctx context.Context, gen backend.Gen, meta backend.Meta) (backend.VectorReader, error) {
	return Open(gen.Dir, meta)
}

// Open is Engine.Open with its concrete result.
func Open(genDir string, meta backend.Meta) (*Reader, error) {
	r, err := ivf.Open(Dir(genDir), ivf.OpenOptions{VerifyBelow: backend.VerifyBudget})
	if err != nil {
		return nil, fmt.Errorf("%s: opening the IVF index: %w", genDir, err)
	}
	return &Reader{r: r, meta: meta}, nil
}

// Drop removes gen's index.
func (Engine) Drop(ctx context.Context, gen backend.Gen) error {
	if err := os.RemoveAll(Dir(gen.Dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Writer writes one generation's index. The driver adds vectors from its embedding goroutine
// while it deletes replaced passages from another (an update), as the graph allows; ivf.Writer
// is not safe for concurrent use, so mu serialises every call.
type Writer struct {
	mu  sync.Mutex
	w   *ivf.Writer
	dir string
}

var _ backend.VectorWriter = (*Writer)(nil)

// Add adds vectors under keys, which ascend (the driver numbers passages in order).
func (w *Writer) Add(ctx context.Context, keys []uint32, vecs [][]float32) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Add(ctx, keys, vecs)
}

// Delete deletes key's vector (a key without one is ignored, as the graph ignores it).
func (w *Writer) Delete(key uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w.Delete(key)
}

// Len is the number of vectors, deleted ones included.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Len()
}

// Commit writes the index, hashing its new files as they are written (Files). A checkpoint's
// commit (o.Checkpoint) leaves its list segments unmerged, for the writer that adopts it.
func (w *Writer) Commit(ctx context.Context, o backend.CommitOptions) (backend.VectorCommit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	files, err := w.w.Commit(ctx, !o.Checkpoint, o.Progress)
	if err != nil {
		return backend.VectorCommit{}, fmt.Errorf("committing the IVF index: %w", err)
	}
	params, err := json.Marshal(w.w.Options())
	if err != nil {
		return backend.VectorCommit{}, err
	}
	vc := backend.VectorCommit{Index: Name, Params: params}
	for _, f := range files {
		vc.Files = append(vc.Files, backend.CommittedFile{Path: Name + "/" + f.Name, Size: f.Size, SHA256: hex.EncodeToString(f.SHA256[:])})
	}
	// No Reopen: the index is in its files, mapped again in a moment, and a writer derived from
	// it links them from the directory the store committed (the checkpoint's, renamed).
	return vc, nil
}

// Abort releases the writer; its files go with the generation.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w.Abort()
}

// Reader searches one generation's index. It is safe for concurrent use.
type Reader struct {
	r    *ivf.Reader
	meta backend.Meta
}

var _ backend.VectorReader = (*Reader)(nil)

// Index returns the index, for tests and tools that inspect it.
func (r *Reader) Index() *ivf.Reader { return r.r }

// Options are the index's parameters.
func (r *Reader) Options() ivf.Options { return r.r.Options() }

// Dim is the dimension of the vectors.
func (r *Reader) Dim() int { return r.r.Dim() }

// RefineBits is the bits a dimension of the refinement codes: 0 in an index written without
// them (Options.NoRefine, or a version before them).
func (r *Reader) RefineBits() int { return r.r.Head().RefineBits }

// Len is the number of vectors, deleted ones included.
func (r *Reader) Len() int { return r.r.Len() }

// Live is the number of vectors not deleted.
func (r *Reader) Live() int { return r.r.Live() }

// Has reports whether key has a live vector; a mapped index cannot fail to tell.
func (r *Reader) Has(ctx context.Context, key uint32) (bool, error) { return r.r.Has(key), nil }

// Vector returns key's vector as the index keeps it (the unit vector of its int8 codes).
func (r *Reader) Vector(ctx context.Context, key uint32) ([]float32, bool, error) {
	v, ok := r.r.Vector(key)
	return v, ok, nil
}

// Verify checks every file against its checksum and every vector against the lists.
func (r *Reader) Verify() error { return r.r.Verify() }

// Close releases the index's mappings.
func (r *Reader) Close() error {
	if r.r == nil {
		return nil // taken over by a writer
	}
	return r.r.Close()
}

// Search returns the q.K nearest live passages that pass q.Filter; q.Ef is the number of lists
// probed (0: the index's default).
func (r *Reader) Search(ctx context.Context, q backend.VectorQuery) ([]backend.Hit, error) {
	if q.Filter.None {
		return nil, nil
	}
	var keep func(uint32) bool
	var keeper *backend.Keeper
	if !q.Filter.Empty() {
		var err error
		if keeper, err = backend.NewKeeper(ctx, r.meta, q.Filter); err != nil {
			return nil, fmt.Errorf("ivfvec: %w", err)
		}
		keep = keeper.Keep
	}
	var res []ivf.Result
	var err error
	if q.Exact {
		res, err = r.r.Exact(q.Vector, q.K, keep)
	} else {
		res, err = r.r.Search(q.Vector, q.K, ivf.SearchOptions{Probe: q.Ef, Rescore: q.Rescore}, keep)
	}
	if err == nil && keeper != nil {
		err = keeper.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("dense search: %w", err)
	}
	hits := make([]backend.Hit, len(res))
	for i, h := range res {
		hits[i] = backend.Hit{Key: h.Key, Score: float64(h.Score)}
	}
	return hits, nil
}
