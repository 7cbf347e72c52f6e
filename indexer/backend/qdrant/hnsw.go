package qdrant

import (
	"context"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// HNSW configures Qdrant's graph index of the dense vectors. Zero fields keep Qdrant's own
// defaults, which the server applies (1.16: m 16, ef_construct 100, full_scan_threshold
// 10,000 KB, indexing_threshold 10,000 KB, search ef = ef_construct).
//
// Qdrant builds a graph only for a segment whose vectors exceed IndexingThresholdKB; smaller
// segments are scanned, which is exact. A corpus of a few hundred thousand 384-d passages
// spread over 6 shards stays below the default in every shard, so a deployment that wants
// HNSW's speed on such a corpus (and a test that wants to measure HNSW's recall) lowers it.
type HNSW struct {
	// M is the number of edges per node of the graph.
	M int
	// EfConstruct is the candidate list size while the graph is built.
	EfConstruct int
	// Ef is the candidate list size of a query that names none (backend.VectorQuery.Ef 0).
	Ef int
	// IndexingThresholdKB: a segment whose dense vectors take more kilobytes than this gets
	// a graph (1 KB = one 256-d float32 vector).
	IndexingThresholdKB int
	// FullScanThresholdKB: a filtered query whose candidates take fewer kilobytes than this
	// is answered by a scan instead of the graph.
	FullScanThresholdKB int
}

func (h HNSW) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"m", h.M}, {"ef_construct", h.EfConstruct}, {"ef", h.Ef}, {"indexing threshold", h.IndexingThresholdKB}, {"full scan threshold", h.FullScanThresholdKB}} {
		if f.v < 0 {
			return fmt.Errorf("qdrant: HNSW %s %d: must be >= 0 (0: Qdrant's default)", f.name, f.v)
		}
	}
	if h.M == 1 {
		return fmt.Errorf("qdrant: HNSW m 1: a graph needs at least 2 edges per node")
	}
	return nil
}

// hnswConfig is the collection's graph configuration; nil keeps the server's.
func (h HNSW) hnswConfig() *qdrant.HnswConfigDiff {
	if h.M == 0 && h.EfConstruct == 0 && h.FullScanThresholdKB == 0 {
		return nil
	}
	d := &qdrant.HnswConfigDiff{}
	if h.M > 0 {
		d.M = qdrant.PtrOf(uint64(h.M))
	}
	if h.EfConstruct > 0 {
		d.EfConstruct = qdrant.PtrOf(uint64(h.EfConstruct))
	}
	if h.FullScanThresholdKB > 0 {
		d.FullScanThreshold = qdrant.PtrOf(uint64(h.FullScanThresholdKB))
	}
	return d
}

// optimizersConfig is the collection's optimizer configuration; nil keeps the server's.
func (h HNSW) optimizersConfig() *qdrant.OptimizersConfigDiff {
	if h.IndexingThresholdKB == 0 {
		return nil
	}
	return &qdrant.OptimizersConfigDiff{IndexingThreshold: qdrant.PtrOf(uint64(h.IndexingThresholdKB))}
}

// IndexState is what Qdrant reports of a collection's indexing.
type IndexState struct {
	Status   qdrant.CollectionStatus // Green: no optimisation pending or running
	Points   uint64                  // points, metadata points included
	Indexed  uint64                  // vectors in indexed segments, summed over the named vectors
	Vectors  uint64                  // stored vectors, summed over the named vectors
	Segments uint64
}

// Done reports whether every stored vector is in an indexed segment and nothing is pending.
// Both are needed: while a segment is rebuilt Qdrant counts its vectors twice, so Indexed
// may exceed Vectors with the status still yellow.
func (s IndexState) Done() bool {
	return s.Status == qdrant.CollectionStatus_Green && s.Indexed >= s.Vectors
}

// IndexState reads gen's collection status and counts. Qdrant's indexed count sums every
// named vector (dense, bm25 and tf), so Vectors counts the passages holding each, and
// Indexed reaching Vectors means the dense vectors of every passage are in a graph.
func (e *Engine) IndexState(ctx context.Context, gen backend.Gen) (IndexState, error) {
	coll := e.Collection(gen.Name)
	info, err := e.collectionInfo(ctx, coll)
	if err != nil {
		return IndexState{}, err
	}
	st := IndexState{Status: info.GetStatus(), Points: info.GetPointsCount(), Indexed: info.GetIndexedVectorsCount(), Segments: info.GetSegmentsCount()}
	for _, vec := range []string{vecDense, vecBM25, vecTF} {
		n, err := e.countWith(ctx, coll, vec)
		if err != nil {
			return st, err
		}
		st.Vectors += uint64(n)
	}
	return st, nil
}

// countWith counts coll's passage points that hold the named vector vec.
func (e *Engine) countWith(ctx context.Context, coll, vec string) (int, error) {
	f := passagesFilter()
	f.Must = append(f.Must, qdrant.NewHasVector(vec))
	var n uint64
	err := e.do(ctx, "count "+vec, coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		n, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Filter: f, Exact: qdrant.PtrOf(true)})
		return err
	})
	return int(n), err
}

// waitIndexed polls gen's collection every poll until every stored vector is indexed and
// Qdrant reports it green (IndexState.Done), and returns the last state; ctx bounds the wait.
// Qdrant indexes in the background after the writes return, so a benchmark or a recall
// measurement taken before this measures scans of unindexed segments, not the graph. A
// collection whose shards stay below HNSW.IndexingThresholdKB never gets there.
func (e *Engine) waitIndexed(ctx context.Context, gen backend.Gen, poll time.Duration) (IndexState, error) {
	for {
		st, err := e.IndexState(ctx, gen)
		if err != nil {
			return st, err
		}
		if st.Done() {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("qdrant collection %s: not indexed (status %v, %d of %d vectors indexed): %w", e.Collection(gen.Name), st.Status, st.Indexed, st.Vectors, ctx.Err())
		case <-time.After(poll):
		}
	}
}
