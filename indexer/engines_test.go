package indexer

import (
	"context"

	"github.com/blevesearch/bleve/v2"

	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// bleveIdx, statsCtx and graphOf reach the local engines under a generation, for tests that
// inspect bleve and the graph directly.
func bleveIdx(g *Generation) bleve.Index { return g.Lexical.(*blevebm25.Reader).Index() }

func statsCtx(g *Generation) context.Context {
	return g.Lexical.(*blevebm25.Reader).Context(context.Background())
}

// bm25Path is the bleve directory of the generation at genDir.
func bm25Path(genDir string) string { return blevebm25.Dir(genDir) }

func graphOf(g *Generation) *hnsw.Graph { return g.Vectors.(*hnswvec.Reader).Graph() }
