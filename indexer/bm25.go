package indexer

import (
	"github.com/blevesearch/bleve/v2/analysis/lang/en"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Analyzer is the default analyzer, of indexes in English and of manifests that record none:
// bleve's English analyzer: unicode tokens, possessives, lower case, English stop words,
// Porter stemming (the original Porter algorithm, bleve's analysis/token/porter; bleve's
// Snowball English stemmer is a separate filter this analyzer does not use). Other languages
// get theirs from internal/langanalysis (BuildOptions.Language).
const Analyzer = en.AnalyzerName

// Default BM25 parameters of searches (search.BM25K1, BM25B), chosen on training data (README,
// "BM25"). A local index takes them at query time; an index on Qdrant has them baked into its
// weights at build (QdrantOptions.BM25), and searches with others are refused.
const (
	BM25K1 = backend.DefaultK1
	BM25B  = backend.DefaultB
)
