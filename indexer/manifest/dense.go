package manifest

import (
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/ivf"
	"github.com/kairos-rag/kairos/internal/modelid"
)

// The kinds of dense index a manifest records (DenseInfo.Index) and a build names
// (--vector-index): the HNSW graph (indexer/backend/hnswvec) and the inverted file
// (indexer/backend/ivfvec).
const (
	VectorIndexHNSW = "hnsw"
	VectorIndexIVF  = "ivf"
)

// DenseInfo describes the dense part of a generation.
type DenseInfo struct {
	Model modelid.Identity `json:"model"`
	// Index is the kind of index the vectors are in: VectorIndexIVF, or "" for the HNSW graph
	// (every index written before the inverted file; IndexKind names it).
	Index string       `json:"index,omitempty"`
	HNSW  hnsw.Options `json:"hnsw"` // the graph parameters: M, EfConstruction, EfSearch, Seed, Codes (zero for an inverted file)
	// IVF are the inverted file's parameters (lists, probe, rescore, sample, seed); nil for
	// a graph.
	IVF     *ivf.Options `json:"ivf,omitempty"`
	Vectors int          `json:"vectors"`
}

// IndexKind names the kind of index: VectorIndexHNSW or VectorIndexIVF.
func (d *DenseInfo) IndexKind() string {
	if d.Index == "" {
		return VectorIndexHNSW
	}
	return d.Index
}
