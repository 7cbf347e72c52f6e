package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// hybridResult is the two ranked lists of one hybrid query, for Kairos's own fusion.
type hybridResult struct {
	Lexical []backend.Hit // what LexReader.Search returns for the lexical query
	Dense   []backend.Hit // what VecReader.Search returns for the dense query
	// Requests counts the round trips: 1 when the first BM25 page settled the lexical
	// ranking, one more for each further page.
	Requests int
}

var _ backend.HybridSearcher = (*LexReader)(nil)

// SearchHybrid implements backend.HybridSearcher: search's hybrid queries get both rankings
// with one round trip for their first pages (see hybrid), where two calls would make two.
func (r *LexReader) SearchHybrid(ctx context.Context, lq backend.LexicalQuery, vq backend.VectorQuery) (lexical, dense []backend.Hit, err error) {
	res, err := r.hybrid(ctx, lq, vq)
	return res.Lexical, res.Dense, err
}

// hybrid runs a BM25 query and a dense query on r's collection and returns both rankings,
// exactly as Search and VecReader.Search would, with one round trip for their first pages.
//
// One QueryBatch request carries the first BM25 page and the dense query. Qdrant's prefetch
// is not the tool here: it feeds sub-queries into one outer query (a fusion or a rescoring)
// and returns only that query's ranking, while Kairos fuses the two lists itself (its RRF,
// weights and explain). The BM25 ranking is exact only once no unseen passage can beat the
// n-th rescored score (see Search); when the first page does not settle that, the further
// pages are single requests, as in Search.
func (r *LexReader) hybrid(ctx context.Context, lq backend.LexicalQuery, vq backend.VectorQuery) (hybridResult, error) {
	var res hybridResult
	if len(lq.Terms) == 0 || lq.N <= 0 {
		if vq.K <= 0 {
			return res, nil
		}
		// Nothing lexical to ask: the dense query alone.
		dense, err := (&VecReader{e: r.e, coll: r.coll}).Search(ctx, vq)
		return hybridResult{Dense: dense, Requests: 1}, err
	}
	lex, lexOK := r.newLexQuery(lq)
	var reqs []*qdrant.QueryPoints
	if lexOK {
		reqs = append(reqs, lex.request())
	}
	if vq.K > 0 {
		reqs = append(reqs, r.e.denseRequest(r.coll, vq))
	}
	if len(reqs) == 0 {
		return hybridResult{Lexical: []backend.Hit{}}, nil
	}
	var batch []*qdrant.BatchResult
	err := r.e.do(ctx, "hybrid query", r.coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		batch, err = c.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: r.coll, QueryPoints: reqs})
		return err
	})
	if err != nil {
		return res, err
	}
	if len(batch) != len(reqs) {
		return res, fmt.Errorf("qdrant collection %s: hybrid query: %d results for %d queries", r.coll, len(batch), len(reqs))
	}
	res.Requests = 1
	if vq.K > 0 {
		res.Dense = denseHits(batch[len(batch)-1].GetResult())
	}
	if !lexOK {
		res.Lexical = []backend.Hit{}
		return res, nil
	}
	for final := lex.add(batch[0].GetResult()); !final; {
		var pts []*qdrant.ScoredPoint
		req := lex.request()
		err := r.e.do(ctx, "bm25 query", r.coll, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			pts, err = c.Query(ctx, req)
			return err
		})
		if err != nil {
			return res, err
		}
		res.Requests++
		final = lex.add(pts)
	}
	res.Lexical = lex.result()
	return res, nil
}

// denseRequest is the dense query of q on coll: Qdrant's HNSW search (exact when q.Exact)
// with q's ef, else the engine's, filtered on the payload.
func (e *Engine) denseRequest(coll string, q backend.VectorQuery) *qdrant.QueryPoints {
	params := &qdrant.SearchParams{Exact: qdrant.PtrOf(q.Exact)}
	ef := q.Ef
	if ef <= 0 {
		ef = e.opts.HNSW.Ef
	}
	if ef > 0 {
		params.HnswEf = qdrant.PtrOf(uint64(ef))
	}
	return &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQueryDense(q.Vector),
		Using: qdrant.PtrOf(vecDense), Filter: qdrantFilter(q.Filter), Limit: qdrant.PtrOf(uint64(q.K)), Params: params}
}

// denseHits are a dense reply's points as hits, best first, ties by key as search orders them.
func denseHits(pts []*qdrant.ScoredPoint) []backend.Hit {
	hits := make([]backend.Hit, len(pts))
	for i, p := range pts {
		hits[i] = backend.Hit{Key: uint32(p.GetId().GetNum()), Score: float64(p.GetScore())}
	}
	sortHits(hits)
	return hits
}
