package indexer

import (
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Analyzer is the default analyzer, of indexes in English and of manifests that record none
// (manifest.Analyzer).
const Analyzer = manifest.Analyzer

// Default BM25 parameters of searches (search.BM25K1, BM25B), chosen on training data (README,
// "BM25"). A local index takes them at query time; an index on Qdrant has them baked into its
// weights at build (QdrantOptions.BM25), and searches with others are refused.
const (
	BM25K1 = backend.DefaultK1
	BM25B  = backend.DefaultB
)
