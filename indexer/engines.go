package indexer

import (
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Engines are the backends that hold the lexical and vector parts of a generation (see
// indexer/backend). The zero value means the local engines, each in its own package: bleve
// for BM25 (blevebm25) and the HNSW graph (hnswvec); passages always go to the local store
// (kpst), whose keys every part shares.
type Engines struct {
	Lexical backend.Lexical
	Vectors backend.Vectors
}

// bm25Path and hnswPath name the local engines' files of a generation in messages.
func bm25Path(genDir string) string { return blevebm25.Dir(genDir) }
func hnswPath(genDir string) string { return hnswvec.Path(genDir) }

// withDefaults fills the engines left nil; params are the graph parameters of new graphs.
func (e Engines) withDefaults(params hnsw.Options) Engines {
	if e.Lexical == nil {
		e.Lexical = blevebm25.Engine{}
	}
	if e.Vectors == nil {
		e.Vectors = hnswvec.Engine{Params: params}
	}
	return e
}
