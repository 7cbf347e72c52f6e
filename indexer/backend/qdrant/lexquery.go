package qdrant

import (
	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// lexQuery is one BM25 search in progress (see LexReader.Search): the sparse query Qdrant
// bounds the scores with, and the candidates rescored exactly so far. Search and Hybrid
// drive it page by page: request, then add the reply, until add says the ranking is final.
type lexQuery struct {
	r      *LexReader
	n      int
	plan   queryPlan
	idx    []uint32
	val    []float32
	pos    map[uint32]int // term id -> query position
	terms  int
	filter *qdrant.Filter
	hits   []backend.Hit
	seen   map[uint32]bool
	limit  int
	offset int
}

// newLexQuery plans q; ok is false when no query term is in the vocabulary, so nothing
// matches.
func (r *LexReader) newLexQuery(q backend.LexicalQuery) (lq *lexQuery, ok bool) {
	plan := newQueryPlan(q.Terms, r.m.Docs, func(t string) int { return r.vocab[t].df })
	lq = &lexQuery{r: r, n: q.N, plan: plan, pos: map[uint32]int{}, terms: len(q.Terms), seen: map[uint32]bool{}}
	for i, t := range q.Terms {
		v, ok := r.vocab[t]
		if !ok || v.df == 0 {
			continue
		}
		if _, dup := lq.pos[v.id]; dup {
			continue
		}
		lq.pos[v.id] = i
		lq.idx = append(lq.idx, v.id)
		lq.val = append(lq.val, float32(plan.idf[i]*plan.weight[i]*(1+boundSlack)))
	}
	if len(lq.idx) == 0 {
		return nil, false
	}
	lq.filter = qdrantFilter(q.Filter)
	// The first page is generous: bleve's coord factor lowers passages that match few of a
	// long query's terms, so the exact top n often lies below the top n by dot product;
	// on SciFact, 2n candidates needed 2.4 more pages per query on average, 10n 1.1.
	lq.limit = max(10*q.N, 100)
	return lq, true
}

// request is the next page's query: candidates by the bound, with what rescoring needs.
func (lq *lexQuery) request() *qdrant.QueryPoints {
	return &qdrant.QueryPoints{
		CollectionName: lq.r.coll, Query: qdrant.NewQuerySparse(lq.idx, lq.val), Using: qdrant.PtrOf(vecBM25),
		Filter: lq.filter, Limit: qdrant.PtrOf(uint64(lq.limit)), Offset: qdrant.PtrOf(uint64(lq.offset)),
		WithPayload: qdrant.NewWithPayloadInclude(fieldLen), WithVectors: qdrant.NewWithVectorsInclude(vecTF),
	}
}

// add rescores a page's candidates and reports whether the top n is final: the candidates
// are exhausted, or no unseen passage can beat the n-th exact score. Otherwise the next
// request asks for the following page, twice as long.
func (lq *lexQuery) add(pts []*qdrant.ScoredPoint) (final bool) {
	r := lq.r
	for _, p := range pts {
		key := uint32(p.GetId().GetNum())
		if lq.seen[key] {
			continue
		}
		lq.seen[key] = true
		ids, vals := sparseOf(p.GetVectors().GetVectors().GetVectors()[vecTF])
		tf := make([]int, lq.terms)
		for j, id := range ids {
			if i, ok := lq.pos[id]; ok {
				tf[i] = int(vals[j])
			}
		}
		length := int(p.GetPayload()[fieldLen].GetIntegerValue())
		s := lq.plan.score(func(i int) int { return tf[i] }, length, r.m.K1, r.m.B, r.avg)
		lq.hits = append(lq.hits, backend.Hit{Key: key, Score: s})
	}
	sortHits(lq.hits)
	if len(pts) < lq.limit {
		return true
	}
	// Every unseen passage scores at most the last candidate's bound.
	bound := float64(pts[len(pts)-1].GetScore()) * (1 + boundSlack)
	if len(lq.hits) >= lq.n && lq.hits[lq.n-1].Score > bound {
		return true
	}
	lq.offset += lq.limit
	lq.limit *= 2
	return false
}

// result is the top n.
func (lq *lexQuery) result() []backend.Hit {
	if len(lq.hits) > lq.n {
		return lq.hits[:lq.n]
	}
	return lq.hits
}
