package search

import (
	"context"
	"fmt"
	"sort"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// QueryEncoder embeds queries for dense and hybrid search. search declares it so that it needs
// no ONNX code; cmd adapts embed's encoder to it.
type QueryEncoder interface {
	Identity() indexer.ModelIdentity
	EncodeQuery(ctx context.Context, text string) ([]float32, error)
}

// Fusion names a way to merge BM25 and dense rankings in hybrid search.
type Fusion string

const (
	// FusionRRF is reciprocal rank fusion: sum of 1/(RRFK + rank) over the two rankings. It
	// needs no score calibration, which is why it is the default.
	FusionRRF Fusion = "rrf"
	// FusionConvex min-max normalises each ranking's scores over its candidates and takes
	// Alpha*dense + (1-Alpha)*bm25 (a candidate missing from one ranking gets 0 there).
	FusionConvex Fusion = "convex"
)

// Defaults of hybrid fusion.
const (
	DefaultRRFK  = 60
	DefaultAlpha = 0.5
)

func (ix *Index) checkDense() error {
	if ix.gen.Vectors == nil {
		return fmt.Errorf("this index has no dense vectors (build it with --model)")
	}
	if ix.opts.Encoder == nil {
		return fmt.Errorf("dense search needs the index's encoder (%s): give --model", ix.gen.Manifest.Dense.Model.Name)
	}
	return nil
}

// denseCandidates returns the n nearest passages to the query vector that pass the filters:
// the vector engine applies them while it searches.
func (ix *Index) denseCandidates(ctx context.Context, req Request, n int) ([]candidate, error) {
	q, err := ix.opts.Encoder.EncodeQuery(ctx, req.Text)
	if err != nil {
		return nil, fmt.Errorf("encoding query: %w", err)
	}
	hits, err := ix.gen.Vectors.Search(ctx, ix.vectorQuery(q, req, n))
	if err != nil {
		return nil, err
	}
	return denseOf(hits), nil
}

// vectorQuery is the dense query of req for n hits, its vector q. A graph's candidate list is
// raised to n; an inverted file's Ef is the number of lists it probes, which n does not bound
// (0: the index's own).
func (ix *Index) vectorQuery(q []float32, req Request, n int) backend.VectorQuery {
	ef := max(ix.opts.EfSearch, n)
	if d := ix.gen.Manifest.Dense; d != nil && d.IndexKind() == indexer.VectorIndexIVF {
		ef = ix.opts.EfSearch
	}
	return backend.VectorQuery{Vector: q, K: n, Ef: ef, Rescore: ix.opts.Rescore, Exact: req.Exact, Filter: ix.filter(req.Filters)}
}

// denseOf turns the vector engine's hits into candidates.
func denseOf(hits []backend.Hit) []candidate {
	cands := make([]candidate, len(hits))
	for i, h := range hits {
		cands[i] = candidate{key: h.Key, dense: h.Score, hasDense: true, score: h.Score}
	}
	return cands
}

func (ix *Index) searchDense(ctx context.Context, req Request) ([]Hit, error) {
	if err := ix.checkDense(); err != nil {
		return nil, err
	}
	// A cap starts from room for 3 x k candidates, as BM25's, and grows while it leaves the
	// search short (cappedCandidates).
	n := 2 * req.K
	if req.PerDoc > 0 {
		n = 3 * req.K
	}
	cands, err := ix.cappedCandidates(ctx, req, n, func(n int) ([]candidate, bool, error) {
		c, err := ix.denseCandidates(ctx, req, n)
		return c, len(c) >= n, err
	})
	if err != nil {
		return nil, err
	}
	return ix.final(ctx, cands, req, "")
}

func (ix *Index) searchHybrid(ctx context.Context, req Request) ([]Hit, error) {
	if err := ix.checkDense(); err != nil {
		return nil, err
	}
	n := max(req.K, ix.opts.Window)
	if req.PerDoc > 0 {
		n = max(n, 3*req.K) // room to fill K after capping, as BM25's
	}
	cands, err := ix.cappedCandidates(ctx, req, n, func(n int) ([]candidate, bool, error) {
		lex, den, err := ix.hybridCandidates(ctx, req, n)
		return fuse(lex, den, ix.fusionOptions(req)), len(lex) >= n || len(den) >= n, err
	})
	if err != nil {
		return nil, err
	}
	return ix.final(ctx, cands, req, "")
}

// hybridCandidates returns the n best passages by BM25 (document evidence applied) and by
// the dense vectors: in one call when the generation has a hybrid searcher
// (indexer.Generation.Hybrid: one round trip to a remote engine), else in two.
func (ix *Index) hybridCandidates(ctx context.Context, req Request, n int) (lex, den []candidate, err error) {
	hs := ix.gen.Hybrid
	var terms []string
	if hs != nil && !ix.twoCalls {
		langs, _ := ix.searchLanguages(req.Filters)
		if terms, err = ix.terms(req.Text, langs); err != nil {
			return nil, nil, err
		}
	}
	if len(terms) == 0 { // no capability, or nothing lexical to ask (bm25Candidates says which)
		if lex, err = ix.bm25Candidates(ctx, req, n); err != nil {
			return nil, nil, err
		}
		den, err = ix.denseCandidates(ctx, req, n)
		return lex, den, err
	}
	q, err := ix.opts.Encoder.EncodeQuery(ctx, req.Text)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding query: %w", err)
	}
	lh, dh, err := hs.SearchHybrid(ctx, backend.LexicalQuery{Terms: terms, N: n, Filter: ix.filter(req.Filters)}, ix.vectorQuery(q, req, n))
	if err != nil {
		return nil, nil, err
	}
	if lex, err = ix.bm25Of(ctx, lh); err != nil {
		return nil, nil, err
	}
	return lex, denseOf(dh), nil
}

// fuse merges two rankings (each best first) into one, best first.
func fuse(lex, den []candidate, o Options) []candidate {
	slot := make(map[uint32]int, len(lex)+len(den))
	out := make([]candidate, 0, len(lex)+len(den))
	at := func(c candidate) *candidate {
		i, ok := slot[c.key]
		if !ok {
			i = len(out)
			slot[c.key] = i
			out = append(out, candidate{key: c.key, doc: c.doc})
		}
		return &out[i]
	}
	lmin, lmax := scoreRange(lex, func(c candidate) float64 { return c.score })
	dmin, dmax := scoreRange(den, func(c candidate) float64 { return c.dense })
	for rank, c := range lex {
		p := at(c)
		p.bm25, p.hasBM25 = c.score, true
		if o.Fusion == FusionConvex {
			p.score += (1 - o.Alpha) * minmax(c.score, lmin, lmax)
		} else {
			p.score += 1 / float64(o.RRFK+rank+1)
		}
	}
	for rank, c := range den {
		p := at(c)
		p.dense, p.hasDense = c.dense, true
		if o.Fusion == FusionConvex {
			p.score += o.Alpha * minmax(c.dense, dmin, dmax)
		} else {
			p.score += 1 / float64(o.RRFK+rank+1)
		}
	}
	sort.SliceStable(out, byScoreThenKey(out))
	return out
}

func scoreRange(cs []candidate, f func(candidate) float64) (lo, hi float64) {
	for i, c := range cs {
		v := f(c)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

func minmax(v, lo, hi float64) float64 {
	if hi <= lo {
		return 1
	}
	return (v - lo) / (hi - lo)
}

// fusionOptions are the index's fusion options with the request's overrides.
func (ix *Index) fusionOptions(req Request) Options {
	o := ix.opts
	if req.Fusion != "" {
		o.Fusion = req.Fusion
	}
	if req.Alpha > 0 {
		o.Alpha = req.Alpha
	}
	if req.RRFK > 0 {
		o.RRFK = req.RRFK
	}
	return o
}
