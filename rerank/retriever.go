package rerank

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kairos-rag/kairos/search"
)

// Searcher retrieves candidates; the search package's engine satisfies it.
type Searcher interface {
	Search(ctx context.Context, req search.Request) ([]search.Hit, error)
}

// DefaultCandidates is how many retrieved passages the rerankers see when neither the query
// nor RetrieverOptions say.
const DefaultCandidates = 50

// RetrieverOptions configure a Retriever.
type RetrieverOptions struct {
	// Candidates is how many passages to retrieve when a query reranks (at least K).
	// 0 means DefaultCandidates.
	Candidates int
	// Time tunes the time reranker; the zero value means DefaultOptions().
	Time Options
	// Cross tunes the cross-encoder stage; the zero value means DefaultCrossOptions().
	Cross CrossOptions
	// Scorer is the cross-encoder; nil makes the cross stage an error.
	Scorer PairScorer
	// Logger receives one debug line per reranked query; nil means silent.
	Logger *slog.Logger
}

// Retriever is the entry point of every query, from every front end (CLI, HTTP, web page,
// chat): it retrieves candidates through a Searcher and reranks them.
type Retriever struct {
	s    Searcher
	opts RetrieverOptions
	log  *slog.Logger
}

// NewRetriever checks opts and fills their defaults.
func NewRetriever(s Searcher, opts RetrieverOptions) (*Retriever, error) {
	if s == nil {
		return nil, errors.New("rerank: nil Searcher")
	}
	if opts.Candidates == 0 {
		opts.Candidates = DefaultCandidates
	}
	if opts.Candidates < 0 {
		return nil, fmt.Errorf("rerank: Candidates %d must be >= 0", opts.Candidates)
	}
	if opts.Time == (Options{}) {
		opts.Time = DefaultOptions()
	}
	if opts.Cross == (CrossOptions{}) {
		opts.Cross = DefaultCrossOptions()
	}
	if err := opts.Time.Validate(); err != nil {
		return nil, err
	}
	if err := opts.Cross.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retriever{s: s, opts: opts, log: log}, nil
}

// Search resolves q.Time (auto against Options.Now), retrieves Candidates passages when q
// reranks (K otherwise), applies q.Rerank in order, cuts to K and ranks 1..K. When q reranks,
// Hit.Score is the final score of the last stage, which never increases down the list, so a
// caller that sorts by score keeps the reranked order; otherwise it is the retrieval score.
// The breakdown is in Hit.Explain when q.Explain is set.
func (e *Retriever) Search(ctx context.Context, q Query) (Result, error) {
	if err := validStages(q.Rerank); err != nil {
		return Result{}, err
	}
	if err := q.Time.Validate(); err != nil {
		return Result{}, err
	}
	if q.Candidates < 0 {
		return Result{}, fmt.Errorf("rerank: Candidates %d must be >= 0", q.Candidates)
	}
	topts, err := e.timeOptions(q)
	if err != nil {
		return Result{}, err
	}
	spec := q.Time.Resolve(q.Text, topts.now())
	k := q.K
	if k <= 0 {
		k = search.DefaultK
	}
	req := q.Request
	req.K = k
	req.MinScore = nil // applied below, to the score returned (a rerank stage's when reranking)
	if len(q.Rerank) > 0 {
		n := q.Candidates
		if n == 0 {
			n = e.opts.Candidates
		}
		req.K = max(n, k)
	}
	for _, st := range q.Rerank {
		if st == StageCross && e.opts.Scorer == nil {
			return Result{}, errors.New("rerank: cross stage requested but no cross-encoder is configured")
		}
	}
	shits, err := e.s.Search(ctx, req)
	if err != nil {
		return Result{}, err
	}
	hits := newCandidates(shits)
	if q.Explain {
		for i := range hits {
			hits[i].Explain.Formula = retrievalFormula(shits[i])
		}
	}
	for _, st := range q.Rerank {
		switch st {
		case StageCross:
			if err := CrossRerank(ctx, e.opts.Scorer, q.Text, hits, e.opts.Cross, q.Explain); err != nil {
				return Result{}, err
			}
		case StageTime:
			TimeRerank(hits, spec, topts, q.Explain)
		case StageWikiChat:
			WikiChatSort(hits, spec, q.Explain)
		}
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	for i := range hits {
		hits[i].Rank = i + 1
		if len(q.Rerank) > 0 {
			hits[i].Score = hits[i].Explain.Final
		}
		if !q.Explain {
			hits[i].Explain = nil
		}
	}
	if m := q.MinScore; m != nil {
		for i, h := range hits {
			if h.Score < *m {
				hits = hits[:i]
				break
			}
		}
	}
	e.log.Debug("reranked", "query", q.Text, "time", spec.String(), "stages", FormatStages(q.Rerank), "candidates", len(shits), "k", len(hits))
	return Result{Hits: hits, Time: spec}, nil
}

// timeOptions are the engine's time options with q's own now and half-life.
func (e *Retriever) timeOptions(q Query) (Options, error) {
	o := e.opts.Time
	if !q.Now.IsZero() {
		o.Now = q.Now
	}
	if q.RecentHalfLifeYears != 0 {
		o.RecentHalfLifeYears = q.RecentHalfLifeYears
		if err := o.Validate(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// ensureExplain gives every hit an Explanation seeded from its score, for callers of the stage
// functions that did not go through newCandidates.
func ensureExplain(hits []Hit) {
	for i := range hits {
		if hits[i].Explain == nil {
			s := hits[i].Score
			hits[i].Explain = &Explanation{Retrieval: s, Relevance: s, Final: s}
		}
	}
}

// newCandidates wraps retrieved hits with an Explanation that the stages fill.
func newCandidates(shits []search.Hit) []Hit {
	hits := make([]Hit, len(shits))
	exps := make([]Explanation, len(shits))
	for i, h := range shits {
		exps[i] = Explanation{Retrieval: h.Score, Relevance: h.Score, Final: h.Score}
		hits[i] = Hit{Hit: h, Explain: &exps[i]}
	}
	return hits
}

// retrievalFormula says what the retrieval score is, in the terms of the hit's Scores, so
// that a score that differs from scores.bm25 is not a mystery; "" when the hit has no Scores
// (a plain BM25 score: nothing to explain).
func retrievalFormula(h search.Hit) string {
	if ev, ok := h.Scores[search.ScoreDocEvidence]; ok {
		return fmt.Sprintf("retrieval %.4g = bm25 %.4g + doc_evidence %.4g (the BM25 scores of document %s's other candidate passages, weighted)",
			h.Score, h.Scores["bm25"], ev, h.DocID)
	}
	bm, hasBM := h.Scores["bm25"]
	dn, hasDense := h.Scores["dense"]
	switch {
	case len(h.Scores) == 0:
		return ""
	case hasDense && !hasBM && dn == h.Score:
		return fmt.Sprintf("retrieval %.4g = dense (cosine similarity to the query)", h.Score)
	case hasBM && hasDense:
		return fmt.Sprintf("retrieval %.4g: hybrid fusion (--fusion) of bm25 %.4g and dense %.4g, each ranked in its own list", h.Score, bm, dn)
	case hasBM:
		return fmt.Sprintf("retrieval %.4g: hybrid fusion (--fusion) of bm25 %.4g; not among the dense candidates", h.Score, bm)
	default:
		return fmt.Sprintf("retrieval %.4g: hybrid fusion (--fusion) of dense %.4g; not among the BM25 candidates", h.Score, dn)
	}
}
