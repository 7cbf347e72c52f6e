package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Compact writes a new generation of the index at dir holding only its live passages: one
// store segment, no tombstones, a bleve index re-indexed from the store and an HNSW graph
// rebuilt from the stored vectors (no encoder needed). Keys are renumbered 0..live-1 in their
// old order. Readers of the previous generation are unaffected; the new one goes live
// atomically.
func Compact(ctx context.Context, dir string, logger *slog.Logger) (*Summary, error) {
	return compactDir(ctx, &Options{Dir: dir, Logger: logger})
}

// compactDir is Compact with every option (the fault tests set faultAt).
func compactDir(ctx context.Context, opts *Options) (*Summary, error) {
	st, err := storeOf(opts.Dir, opts)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.compact(ctx, opts)
}

// compactGen compacts generation genDir into a new live generation; prev is the generation
// cleanOld keeps besides it.
func compactGen(ctx context.Context, opts *Options, genDir string, prev int) (*Manifest, error) {
	base, err := OpenGeneration(genDir)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	bm := base.Manifest
	if bm.FormatVersion == 1 {
		return nil, fmt.Errorf("%s: index format 1 has no document table; rebuild it", genDir)
	}
	docs, err := doctable.Read(filepath.Join(genDir, doctable.FileName))
	if err != nil {
		return nil, err
	}
	o := *opts
	o.Encoder, o.Build = nil, bm.Options
	if err := o.adoptLexical(bm); err != nil {
		return nil, err
	}
	o.HNSW = hnsw.Options{}
	if d := bm.Dense; d != nil {
		o.HNSW = d.HNSW
		o.HNSW.Workers = 0 // this machine's default, whatever the manifest's builder had
	}
	if _, local := o.Engines.Vectors.(hnswvec.Engine); local || o.Engines.Vectors == nil {
		o.Engines.Vectors = hnswvec.Engine{Params: o.HNSW} // the compacted graph keeps the base's parameters
	}
	d := &driver{dir: opts.Dir, gens: dirStore{dir: opts.Dir, at: opts.at}, opts: &o, spec: runSpec{mode: modeAppend}, prog: newProgress(nil, 0, false), prev: prev,
		inputs: func() ([]Input, error) { return nil, nil }}
	if err := d.open(ctx, nil, handover{}); err != nil {
		return nil, err
	}
	w := d.w
	ok := false
	defer func() {
		if !ok {
			w.abort()
			os.RemoveAll(d.tmp)
		}
	}()
	if base.Vectors != nil {
		w.model = bm.Dense.Model
		if w.vec, err = o.Engines.Vectors.Begin(ctx, backend.Gen{Name: manifest.GenerationName(w.gen), Dir: d.tmp}, w.model.Dim, nil); err != nil {
			return nil, err
		}
		w.vectors = func(src []uint32) ([][]float32, error) {
			out := make([][]float32, len(src))
			for i, k := range src {
				v, ok, err := base.Vectors.Vector(ctx, k)
				if err != nil {
					return nil, fmt.Errorf("passage key %d: reading its vector: %w", k, err)
				}
				if !ok {
					return nil, fmt.Errorf("passage key %d has no vector", k)
				}
				out[i] = v
			}
			return out, nil
		}
		w.start(ctx) // restart the session with the graph in place
	}
	// Documents in the order of their first passage, so passages keep their relative order.
	ids := make([]string, 0, len(docs))
	for id, e := range docs {
		if len(e.Keys) > 0 {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return docs[ids[i]].Keys[0] < docs[ids[j]].Keys[0] })
	batch := docBatch{}
	n := 0
	for _, id := range ids {
		e := docs[id]
		dp := docPassages{id: id, hash: e.Hash, src: e.Keys}
		for _, k := range e.Keys {
			p, err := base.store.Get(ctx, k)
			if err != nil {
				return nil, err
			}
			dp.passages = append(dp.passages, p)
		}
		batch.docs = append(batch.docs, dp)
		if n += len(dp.passages); n >= o.Build.BatchSize {
			if err := w.apply(batch); err != nil {
				return nil, err
			}
			batch, n = docBatch{}, 0
		}
	}
	if err := w.apply(batch); err != nil {
		return nil, err
	}
	if err := w.wait(); err != nil {
		return nil, err
	}
	man, err := w.finish()
	ok = true
	if err == nil {
		err = opts.at("compact-finished")
	}
	if err != nil {
		os.RemoveAll(d.tmp)
		return nil, err
	}
	// The compacted generation describes the same collection as its source.
	man.Counts.Documents, man.Counts.Skipped, man.Counts.Bad, man.Counts.Repaired, man.Counts.URLsRemoved =
		bm.Counts.Documents, bm.Counts.Skipped, bm.Counts.Bad, bm.Counts.Repaired, bm.Counts.URLsRemoved
	man.Inputs, man.DateFrom, man.DateTo, man.Parent = bm.Inputs, bm.DateFrom, bm.DateTo, bm.Generation
	gen := w.gen
	man.Generation, man.Created = gen, time.Now().UTC()
	if err := syncTree(d.tmp); err != nil {
		os.RemoveAll(d.tmp)
		return nil, err
	}
	if err := opts.at("compact-synced"); err != nil {
		os.RemoveAll(d.tmp)
		return nil, err
	}
	if err := manifest.Write(d.tmp, man); err != nil {
		os.RemoveAll(d.tmp)
		return nil, err
	}
	if err := opts.at("compact-manifest-written"); err != nil {
		os.RemoveAll(d.tmp)
		return nil, err
	}
	if err := commitGen(opts.Dir, d.tmp, gen, opts.at); err != nil {
		return nil, errors.Join(fmt.Errorf("committing compacted generation %d: %w", gen, err), os.RemoveAll(d.tmp))
	}
	if err := cleanOld(opts.Dir, gen, prev); err != nil {
		opts.Logger.Warn("removing old generations", "dir", opts.Dir, "err", err)
	}
	return man, opts.at("compact-old-removed")
}
