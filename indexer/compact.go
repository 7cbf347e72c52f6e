package indexer

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// compact compacts the live generation (Compact) with every option (the fault tests set
// faultAt). A generation without tombstones is left as it is, unless it is outdated
// (Generation.Outdated): compaction is how an index gains what a newer version writes
// without embedding its passages again.
func (ix *Index) compact(ctx context.Context, opts *Options) (*Summary, error) {
	start := time.Now()
	if _, err := ix.st.Manifest(ctx, 0); err != nil {
		return nil, err // before Lock, which would create a missing directory
	}
	unlock, err := ix.st.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := ix.prepare(opts); err != nil {
		return nil, err
	}
	base, err := ix.open(ctx, 0, ReadOptions{}) // again, under the lock; a damaged one is refused
	if err != nil {
		return nil, err
	}
	defer base.Close()
	if bm := base.Manifest; bm.Tombstones == 0 && base.Outdated == "" {
		// Nothing deleted is kept (a store that removes deleted passages, Qdrant, never keeps
		// any): the live generation is what compaction would write.
		return &Summary{Dir: opts.Dir, Generation: bm.Generation, Counts: bm.Counts, Dense: bm.Dense, Elapsed: time.Since(start)}, nil
	}
	man, err := ix.compactBase(ctx, opts, base, base.Manifest.Generation)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, Dense: man.Dense,
		Elapsed: time.Since(start), Compacted: true, Upgraded: base.Outdated}, nil
}

// compactGen compacts generation gen into a new live generation; prev is the generation Drop
// keeps besides it.
func (ix *Index) compactGen(ctx context.Context, opts *Options, gen, prev int) (*Manifest, error) {
	base, err := ix.open(ctx, gen, ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer base.Close()
	return ix.compactBase(ctx, opts, base, prev)
}

// compactBase writes base, an open generation, again as a new live generation without what
// deletions left; prev is the generation Drop keeps besides it.
func (ix *Index) compactBase(ctx context.Context, opts *Options, base *Generation, prev int) (*Manifest, error) {
	bm := base.Manifest
	docs, err := base.docTable(ctx)
	if err != nil {
		return nil, err
	}
	o := *opts
	o.Encoder, o.Build = nil, bm.Options
	o.HNSW, o.IVF = hnsw.Options{}, ivf.Options{}
	if d := bm.Dense; d != nil {
		o.HNSW = d.HNSW    // the compacted graph keeps the base's parameters
		o.HNSW.Workers = 0 // this machine's default, whatever the manifest's builder had
		if d.IVF != nil {
			// The inverted file keeps the base's search parameters and seed; its lists and
			// training sample are chosen for the passages it keeps.
			o.IVF = *d.IVF
			o.IVF.Lists, o.IVF.Sample, o.IVF.Workers = 0, 0, 0
		}
	}
	eng, err := ix.engines(ctx, &o, bm)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	prog := newCopyProgress(opts.Progress, bm.Counts.Passages, base.Vectors != nil)
	d := &driver{ix: ix, opts: &o, copies: eng.CheckpointCopies, spec: runSpec{mode: modeAppend}, prog: prog, prev: prev,
		inputs: func() ([]Input, error) { return nil, nil }}
	if err := d.open(ctx, nil, handover{}); err != nil {
		return nil, err
	}
	w := d.w
	ok := false
	defer func() {
		if !ok {
			w.abort()
		}
		if d.tmp != "" {
			ix.discard(ctx, d.writing(), opts.Logger)
		}
	}()
	if base.Vectors != nil {
		w.model = bm.Dense.Model
		vb := backend.VectorBegin{Expect: bm.Counts.Passages} // the live passages, all embedded
		if w.vec, err = o.eng.Vectors.Begin(ctx, backend.Gen{Name: manifest.GenerationName(w.gen), Dir: d.tmp}, w.model.Dim, nil, vb); err != nil {
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
	stop := sync.OnceFunc(prog.start())
	defer stop()
	batch := docBatch{}
	n := 0
	for _, id := range ids {
		e := docs[id]
		dp := docPassages{id: id, hash: e.Hash, src: e.Keys}
		if dp.passages, err = base.Passages.GetMany(ctx, e.Keys); err != nil {
			return nil, err
		}
		batch.docs = append(batch.docs, dp)
		prog.read(int64(len(dp.passages)), 1)
		prog.passagesSplit(len(dp.passages))
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
	prog.inputsRead()
	if err := w.wait(); err != nil {
		return nil, err
	}
	man, err := w.finish()
	ok = true
	if err == nil {
		err = opts.at("compact-finished")
	}
	if err != nil {
		return nil, err
	}
	// The compacted generation describes the same collection as its source.
	man.Counts.Documents, man.Counts.Skipped, man.Counts.Bad, man.Counts.Repaired, man.Counts.URLsRemoved =
		bm.Counts.Documents, bm.Counts.Skipped, bm.Counts.Bad, bm.Counts.Repaired, bm.Counts.URLsRemoved
	man.Inputs, man.DateFrom, man.DateTo, man.Parent = bm.Inputs, bm.DateFrom, bm.DateTo, bm.Generation
	man.Generation, man.Created = w.gen, time.Now().UTC()
	if err := syncTree(d.tmp); err != nil {
		return nil, err
	}
	if err := opts.at("compact-synced"); err != nil {
		return nil, err
	}
	if err := manifest.Write(d.tmp, man); err != nil {
		return nil, err
	}
	if err := opts.at("compact-manifest-written"); err != nil {
		return nil, err
	}
	if err := ix.st.Commit(ctx, d.writing(), man, store.CommitOptions{At: opts.at}); err != nil {
		return nil, fmt.Errorf("committing compacted generation %d: %w", w.gen, err)
	}
	d.tmp = ""
	stop()
	prog.finish()
	if err := ix.st.Drop(ctx, w.gen, prev); err != nil {
		opts.Logger.Warn("removing old generations", "index", opts.Dir, "err", err)
	}
	return man, opts.at("compact-old-removed")
}
