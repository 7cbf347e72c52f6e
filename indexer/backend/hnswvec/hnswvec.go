// Package hnswvec is Kairos's local vector engine: one HNSW graph (internal/hnsw) per
// generation, saved as one checksummed file and, by default, opened memory-mapped for searching
// (the graph walks one-byte codes and rescores with the float vectors read from the file, so
// opening is quick and resident memory stays a fraction of the file; with binary codes,
// hnsw.Options.Codes, the walk uses one bit per dimension instead). Filters are applied
// inside the graph walk (hnsw.Graph.SearchFiltered), with the dates and sources of passages
// from the passage store. A new graph is built from one-byte codes (whichever codes it saves),
// its float vectors kept in a file in the generation's directory rather than in memory
// (hnsw.Options.Build).
package hnswvec

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Name is the file of a generation that holds its graph.
const Name = "dense.hnsw"

// Path returns the graph file of the generation at genDir.
func Path(genDir string) string { return filepath.Join(genDir, Name) }

// Engine is the HNSW vector engine; Params are the graph parameters of new generations (a
// derived generation keeps its base's).
type Engine struct {
	Params hnsw.Options
	// InMemory opens generations read whole into memory (float search, as before the mapped
	// form) instead of memory-mapped (hnsw.LoadOptions.Mapped, the default).
	InMemory bool
	// Rescore is hnsw.LoadOptions.Rescore for mapped generations (0: its default, 2*k).
	Rescore int
	// BinaryRescore is hnsw.LoadOptions.BinaryRescore for generations with binary codes.
	BinaryRescore string
}

var _ backend.Vectors = Engine{}

// Begin starts gen's graph: new for vectors of dim, or the graph of base, a *Reader of this
// engine, which Begin takes over (base must not be searched afterwards). A base that is the
// build's own checkpoint (o.Adopt), saved without its repair pass, is marked for it: Commit
// repairs the whole graph, even when nothing is added (a graph opened mapped is read into
// memory for it by the next Add or Commit, as an Add would). With o.Expect, the graph is
// allocated once for that many vectors.
func (e Engine) Begin(ctx context.Context, gen backend.Gen, dim int, base backend.VectorReader, o backend.VectorBegin) (backend.VectorWriter, error) {
	w, err := e.begin(gen, dim, base)
	if err != nil {
		return nil, err
	}
	if base != nil && o.Adopt {
		if err := w.g.MarkUnrepaired(); err != nil {
			w.Abort()
			return nil, fmt.Errorf("adopting the checkpoint's graph: %w", err)
		}
	}
	if more := o.Expect - w.g.Len(); more > 0 {
		if err := w.g.Reserve(more); err != nil {
			w.Abort()
			return nil, fmt.Errorf("making room in the graph for %d more vectors: %w", more, err)
		}
	}
	return w, nil
}

// begin starts gen's graph (Begin).
func (e Engine) begin(gen backend.Gen, dim int, base backend.VectorReader) (*Writer, error) {
	if base != nil {
		r, ok := base.(*Reader)
		if !ok || r.g == nil {
			return nil, fmt.Errorf("hnswvec: cannot derive from %T", base)
		}
		g := r.g
		r.g, r.owned = nil, false
		p := e.buildParams(gen, g.Options())
		if err := g.SetBuild(p.Build, p.SpillDir); err != nil {
			return nil, err
		}
		g.DeferRepair()
		return &Writer{g: g, path: Path(gen.Dir)}, nil
	}
	g, err := hnsw.New(dim, e.buildParams(gen, e.Params))
	if err != nil {
		return nil, err
	}
	// Nothing searches a graph while it is written: the repair pass runs once, when Commit
	// saves it, not after every batch.
	g.DeferRepair()
	return &Writer{g: g, path: Path(gen.Dir)}, nil
}

// buildParams are p with what the graph of gen is built from: Params.Build when set, else from
// int8 codes, whichever codes the file will hold (binary codes are computed at Save from the
// float vectors, which a graph built from codes keeps in gen's directory, not in memory; built
// from floats, a graph of 10M x 256 vectors would hold 10.24 GB of them).
func (e Engine) buildParams(gen backend.Gen, p hnsw.Options) hnsw.Options {
	p.Build = e.Params.Build
	if p.Build == "" {
		p.Build = hnsw.BuildCodes
	}
	p.SpillDir = gen.Dir
	return p
}

// Open loads gen's graph.
func (e Engine) Open(ctx context.Context, gen backend.Gen, meta backend.Meta) (backend.VectorReader, error) {
	return OpenWith(gen.Dir, meta, hnsw.LoadOptions{Mapped: !e.InMemory, Rescore: e.Rescore, BinaryRescore: e.BinaryRescore})
}

// Open is Engine.Open with its concrete result, for the default engine (mapped).
func Open(genDir string, meta backend.Meta) (*Reader, error) {
	return OpenWith(genDir, meta, hnsw.LoadOptions{Mapped: true})
}

// OpenWith opens gen's graph as o says.
func OpenWith(genDir string, meta backend.Meta, o hnsw.LoadOptions) (*Reader, error) {
	g, err := hnsw.LoadWith(Path(genDir), o)
	if err != nil {
		return nil, fmt.Errorf("%s: loading HNSW graph: %w", genDir, err)
	}
	return &Reader{g: g, meta: meta, owned: true}, nil
}

// Drop removes gen's graph file.
func (Engine) Drop(ctx context.Context, gen backend.Gen) error {
	if err := os.Remove(Path(gen.Dir)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Writer adds vectors to one generation's graph.
type Writer struct {
	g    *hnsw.Graph
	path string
}

var _ backend.VectorWriter = (*Writer)(nil)

// Add inserts vectors under keys (on all cores).
func (w *Writer) Add(ctx context.Context, keys []uint32, vecs [][]float32) error {
	k := make([]uint64, len(keys))
	for i, key := range keys {
		k[i] = uint64(key)
	}
	return w.g.Add(ctx, k, vecs)
}

// Delete removes key from the results (its node stays, keeping the graph connected).
func (w *Writer) Delete(key uint32) { w.g.Delete(uint64(key)) }

// Len is the number of vectors, deleted ones included.
func (w *Writer) Len() int { return w.g.Len() }

// Options are the graph's parameters (Commit reports them for the manifest).
func (w *Writer) Options() hnsw.Options { return w.g.Options() }

// Commit saves the graph, hashing it as it is written (Files), after its repair pass, a
// self-search of every node with few in-links, whose progress o.Progress is told. A
// checkpoint's commit (o.Checkpoint) saves it without the pass (hnsw.Graph.SaveCheckpoint),
// which the build's final Commit runs once over the whole graph. The graph stays in memory:
// Reopen reads it without loading it again, so a build that checkpoints goes on from it.
func (w *Writer) Commit(ctx context.Context, o backend.CommitOptions) (backend.VectorCommit, error) {
	save, what := w.g.SaveSum, "saving HNSW graph"
	if o.Checkpoint {
		save, what = w.g.SaveCheckpoint, "saving HNSW graph checkpoint"
	} else if o.Progress != nil {
		w.g.OnRepair(o.Progress)
	}
	size, sum, err := save(w.path)
	if err != nil {
		return backend.VectorCommit{}, fmt.Errorf("%s: %w", what, err)
	}
	params, err := json.Marshal(w.g.Options())
	if err != nil {
		return backend.VectorCommit{}, err
	}
	g := w.g
	return backend.VectorCommit{
		Params: params,
		Files:  []backend.CommittedFile{{Path: filepath.Base(w.path), Size: size, SHA256: hex.EncodeToString(sum[:])}},
		Reopen: func(meta backend.Meta) backend.VectorReader { return &Reader{g: g, meta: meta} },
	}, nil
}

// Abort drops the graph from memory (and the file of its float vectors, if built from codes);
// its graph file, if any, goes with the generation.
func (w *Writer) Abort() {
	if w.g != nil {
		w.g.Close()
	}
	w.g = nil
}

// Reader searches one generation's graph. It is safe for concurrent use.
type Reader struct {
	g     *hnsw.Graph
	meta  backend.Meta
	owned bool // opened from its file (a Writer's Reopen shares the writer's graph)
}

var _ backend.VectorReader = (*Reader)(nil)

// Graph returns the graph, for tests and tools that inspect it.
func (r *Reader) Graph() *hnsw.Graph { return r.g }

// Dim is the dimension of the vectors.
func (r *Reader) Dim() int { return r.g.Dim() }

// Options are the graph's parameters, its codes among them, for checking against the manifest.
func (r *Reader) Options() hnsw.Options { return r.g.Options() }

// Len is the number of vectors, deleted ones included.
func (r *Reader) Len() int { return r.g.Len() }

// Live is the number of vectors not deleted.
func (r *Reader) Live() int { return r.g.Live() }

// Has reports whether key has a live vector. The graph is in memory or mapped: it cannot
// fail to tell.
func (r *Reader) Has(ctx context.Context, key uint32) (bool, error) {
	return r.g.Contains(uint64(key)), nil
}

// Vector returns the stored vector of key; it never fails, as Has.
func (r *Reader) Vector(ctx context.Context, key uint32) ([]float32, bool, error) {
	v, ok := r.g.Vector(uint64(key))
	return v, ok, nil
}

// Close releases the graph's file, if this reader opened it: a mapped graph unmaps it.
func (r *Reader) Close() error {
	if r.g == nil || !r.owned {
		return nil
	}
	return r.g.Close()
}

// Search returns the q.K nearest live passages that pass q.Filter.
func (r *Reader) Search(ctx context.Context, q backend.VectorQuery) ([]backend.Hit, error) {
	if q.Filter.None {
		// A walk that keeps nothing would visit the whole graph to find it.
		return nil, nil
	}
	var keep func(uint64) bool
	var keeper *backend.Keeper
	if !q.Filter.Empty() {
		var err error
		if keeper, err = backend.NewKeeper(ctx, r.meta, q.Filter); err != nil {
			return nil, fmt.Errorf("hnswvec: %w", err)
		}
		keep = func(key uint64) bool { return keeper.Keep(uint32(key)) }
	}
	var res []hnsw.Result
	var err error
	if q.Exact {
		res, err = r.g.SearchExactFiltered(q.Vector, q.K, keep)
	} else {
		res, err = r.g.SearchFiltered(q.Vector, q.K, q.Ef, keep)
	}
	if err == nil && keeper != nil {
		err = keeper.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("dense search: %w", err)
	}
	hits := make([]backend.Hit, len(res))
	for i, h := range res {
		hits[i] = backend.Hit{Key: uint32(h.Key), Score: float64(h.Score)}
	}
	return hits, nil
}
