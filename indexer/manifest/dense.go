package manifest

import (
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/modelid"
)

// DenseInfo describes the dense part of a generation.
type DenseInfo struct {
	Model   modelid.Identity `json:"model"`
	HNSW    hnsw.Options     `json:"hnsw"` // the graph parameters: M, EfConstruction, EfSearch, Seed, Codes
	Vectors int              `json:"vectors"`
}
