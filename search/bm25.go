package search

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/kairos-rag/kairos/indexer"
)

// BM25 parameters, chosen on the SciFact train qrels (README, "BM25 tuning").
const (
	BM25K1 = 0.9
	BM25B  = 0.4
)

var bm25Once sync.Once

// setBM25Params installs Kairos's BM25 parameters. bleve keeps k1 and b in package variables
// read at query time; Kairos sets them once per process, to constants, so every index in the
// process scores the same way and nothing changes them afterwards.
func setBM25Params() {
	bm25Once.Do(func() {
		bsearch.BM25_k1 = BM25K1
		bsearch.BM25_b = BM25B
	})
}

// terms analyses text as the index did, keeping each distinct term once.
func (ix *Index) terms(text string) []string {
	toks := ix.analyzer.Analyze([]byte(text))
	seen := make(map[string]struct{}, len(toks))
	out := make([]string, 0, len(toks))
	for _, t := range toks {
		s := string(t.Term)
		if _, ok := seen[s]; ok {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// bm25Query builds the scoring query: a disjunction of the query's terms over the text field,
// plus the title field when boosted.
func (ix *Index) bm25Query(text string) (query.Query, bool) {
	terms := ix.terms(text)
	if len(terms) == 0 {
		return nil, false
	}
	clauses := make([]query.Query, 0, 2*len(terms))
	for _, t := range terms {
		q := query.NewTermQuery(t)
		q.SetField(indexer.FieldText)
		clauses = append(clauses, q)
		if ix.opts.TitleBoost > 0 {
			tq := query.NewTermQuery(t)
			tq.SetField(indexer.FieldTitle)
			tq.SetBoost(ix.opts.TitleBoost)
			clauses = append(clauses, tq)
		}
	}
	return query.NewDisjunctionQuery(clauses), true
}

// filterQuery returns the filters as queries that restrict but do not score (boost 0).
func filterQuery(f Filters) []query.Query {
	var out []query.Query
	if !f.DateFrom.IsZero() || !f.DateTo.IsZero() {
		t := true
		q := query.NewDateRangeInclusiveQuery(f.DateFrom, f.DateTo, &t, &t)
		q.SetField(indexer.FieldDate)
		q.SetBoost(0)
		out = append(out, q)
	}
	if len(f.Sources) > 0 {
		any := make([]query.Query, len(f.Sources))
		for i, s := range f.Sources {
			q := query.NewTermQuery(s)
			q.SetField(indexer.FieldSource)
			q.SetBoost(0)
			any[i] = q
		}
		out = append(out, query.NewDisjunctionQuery(any))
	}
	return out
}

func (ix *Index) searchBM25(ctx context.Context, req Request) ([]Hit, error) {
	q, ok := ix.bm25Query(req.Text)
	if !ok {
		return nil, nil // nothing searchable (only stop words or punctuation)
	}
	if fq := filterQuery(req.Filters); len(fq) > 0 {
		q = query.NewConjunctionQuery(append([]query.Query{q}, fq...))
	}
	sr := bleve.NewSearchRequestOptions(q, req.K, 0, false)
	sr.Score = "" // default scoring
	res, err := ix.gen.BM25.SearchInContext(ctx, sr)
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	hits := make([]Hit, 0, len(res.Hits))
	for i, h := range res.Hits {
		key, err := strconv.ParseUint(h.ID, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("bm25 hit %q: not a passage key", h.ID)
		}
		p, err := ix.gen.Store.Get(uint32(key))
		if err != nil {
			return nil, err
		}
		hits = append(hits, Hit{Passage: p, Score: h.Score, Rank: i + 1})
	}
	return hits, nil
}
