package qdrant

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Vectors is the engine's dense part (backend.Vectors); Engine.Vectors returns it. The
// vectors go to the passage points the lexical part created, so the lexical part of a
// generation is applied before its vector part commits (the indexer's order).
type Vectors struct{ e *Engine }

var _ backend.Vectors = Vectors{}

// Vectors returns the dense part of the engine.
func (e *Engine) Vectors() Vectors { return Vectors{e} }

// Drop deletes gen's collection: all its parts at once.
func (v Vectors) Drop(ctx context.Context, gen backend.Gen) error { return v.e.Drop(ctx, gen) }

// Begin starts gen's vector part. Vectors are spilled to a temporary file and set on the
// passage points at Commit. A base's vectors were copied with its points by the lexical
// part's Begin, so only its count is taken here.
func (v Vectors) Begin(ctx context.Context, gen backend.Gen, dim int, base backend.VectorReader, _ backend.VectorBegin) (backend.VectorWriter, error) {
	n := 0
	if base != nil {
		if _, ok := base.(*VecReader); !ok {
			return nil, fmt.Errorf("qdrant: base vectors of another engine (%T)", base)
		}
		n = base.Len()
	}
	coll := v.e.Collection(gen.Name)
	if dim != v.e.opts.Dim {
		return nil, fmt.Errorf("qdrant collection %s: vectors of dimension %d, the engine's is %d", coll, dim, v.e.opts.Dim)
	}
	if err := v.e.ensureCollection(ctx, coll); err != nil {
		return nil, err
	}
	sp, err := newSpill(v.e.opts.SpillDir, "kairos-qdrant-vec-*")
	if err != nil {
		return nil, err
	}
	return &vecWriter{e: v.e, coll: coll, dim: dim, spill: sp, deleted: map[uint32]bool{}, n: n}, nil
}

type vecWriter struct {
	e       *Engine
	coll    string
	dim     int
	spill   *spill
	deleted map[uint32]bool
	n       int
	done    bool
}

func (w *vecWriter) Add(ctx context.Context, keys []uint32, vecs [][]float32) error {
	for i, k := range keys {
		if len(vecs[i]) != w.dim {
			return fmt.Errorf("qdrant collection %s: key %d: vector of dimension %d, want %d", w.coll, k, len(vecs[i]), w.dim)
		}
		rec := binary.LittleEndian.AppendUint32(nil, k)
		for _, x := range vecs[i] {
			rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(x))
		}
		if err := w.spill.write(rec); err != nil {
			return fmt.Errorf("qdrant spill: %w", err)
		}
		w.n++
	}
	return nil
}

func (w *vecWriter) Delete(key uint32) { w.deleted[key] = true }
func (w *vecWriter) Len() int          { return w.n }

// Commit sets the spilled vectors on their points, batched and parallel. A checkpoint's
// commit is the same: the cluster has no work to leave for later, and its own parameters.
func (w *vecWriter) Commit(ctx context.Context, _ backend.CommitOptions) (backend.VectorCommit, error) {
	return backend.VectorCommit{}, w.commit(ctx)
}

func (w *vecWriter) commit(ctx context.Context) error {
	defer w.Abort()
	var pending []*qdrant.PointVectors
	flush := func() error {
		err := w.e.updateVectors(ctx, w.coll, pending)
		pending = pending[:0]
		return err
	}
	err := w.spill.each(func(rec []byte) error {
		key := binary.LittleEndian.Uint32(rec)
		if w.deleted[key] {
			return nil
		}
		vec := make([]float32, w.dim)
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[4+4*i:]))
		}
		pending = append(pending, &qdrant.PointVectors{Id: qdrant.NewIDNum(uint64(key)),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{vecDense: qdrant.NewVectorDense(vec)})})
		if len(pending) >= w.e.opts.Batch*w.e.opts.Parallel*4 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return err
}

func (w *vecWriter) Abort() {
	if !w.done {
		w.done = true
		w.spill.close()
	}
}

// Open opens gen's vector part; filters use the payload, so meta is not needed.
func (v Vectors) Open(ctx context.Context, gen backend.Gen, meta backend.Meta) (backend.VectorReader, error) {
	return v.e.OpenVectors(ctx, v.e.Collection(gen.Name))
}

// OpenVectors opens the dense part of a collection or alias by name.
func (e *Engine) OpenVectors(ctx context.Context, coll string) (*VecReader, error) {
	if err := e.checkCollection(ctx, coll); err != nil {
		return nil, err
	}
	var n uint64
	err := e.do(ctx, "count vectors", coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		n, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Exact: qdrant.PtrOf(true),
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasVector(vecDense)}}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &VecReader{e: e, coll: coll, n: int(n)}, nil
}

// VecReader searches one collection's dense vectors. Safe for concurrent use.
type VecReader struct {
	e    *Engine
	coll string
	n    int
}

var _ backend.VectorReader = (*VecReader)(nil)

// Search is Qdrant's HNSW search (exact when q.Exact), filtered on the payload.
func (r *VecReader) Search(ctx context.Context, q backend.VectorQuery) ([]backend.Hit, error) {
	if q.K <= 0 {
		return nil, nil
	}
	req := r.e.denseRequest(r.coll, q)
	var pts []*qdrant.ScoredPoint
	err := r.e.do(ctx, "dense query", r.coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		pts, err = c.Query(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return denseHits(pts), nil
}

// Vector returns key's stored vector (normalised under Cosine, as Qdrant stores it); ok is
// false when the collection has no point for key or the point no dense vector, and a request
// that fails is an error.
func (r *VecReader) Vector(ctx context.Context, key uint32) ([]float32, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.e.opts.Timeout)
	defer cancel()
	var pts []*qdrant.RetrievedPoint
	err := r.e.do(ctx, "get vector", r.coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		pts, err = c.Get(ctx, &qdrant.GetPoints{CollectionName: r.coll, Ids: keyIDs([]uint32{key}), WithVectors: qdrant.NewWithVectorsInclude(vecDense)})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if len(pts) != 1 {
		return nil, false, nil
	}
	v := pts[0].GetVectors().GetVectors().GetVectors()[vecDense]
	if d := v.GetDense(); d != nil {
		return d.GetData(), true, nil
	}
	//lint:ignore SA1019 the 1.16 server's format
	if data := v.GetData(); len(data) > 0 {
		return data, true, nil
	}
	return nil, false, nil
}

func (r *VecReader) Dim() int  { return r.e.opts.Dim }
func (r *VecReader) Len() int  { return r.n }
func (r *VecReader) Live() int { return r.n }

// Has reports whether key has a dense vector; a request that fails is an error.
func (r *VecReader) Has(ctx context.Context, key uint32) (bool, error) {
	_, ok, err := r.Vector(ctx, key)
	return ok, err
}

func (r *VecReader) Close() error { return nil }
