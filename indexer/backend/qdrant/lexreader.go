package qdrant

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Open opens gen's lexical part to score with sc. The collection's weights were computed
// with the build's k1, b and statistics: a reader asking for others gets backend.ErrScoring.
// Zero parameters or statistics take the build's.
func (l Lexical) Open(ctx context.Context, gen backend.Gen, sc backend.Scoring, _ backend.Meta) (backend.LexicalReader, error) {
	return l.e.OpenLexical(ctx, l.e.Collection(gen.Name), sc)
}

// OpenLexical opens the lexical part of a collection or alias by name.
func (e *Engine) OpenLexical(ctx context.Context, coll string, sc backend.Scoring) (*LexReader, error) {
	if err := e.checkCollection(ctx, coll); err != nil {
		return nil, err
	}
	m, vocab, err := e.readMeta(ctx, coll)
	if err != nil {
		return nil, err
	}
	if sc.Params != (backend.BM25Params{}) && (sc.Params.K1 != m.K1 || sc.Params.B != m.B) {
		return nil, fmt.Errorf("%w: qdrant collection %s has BM25 weights for k1 %v b %v, asked k1 %v b %v", backend.ErrScoring, coll, m.K1, m.B, sc.Params.K1, sc.Params.B)
	}
	if sc.Stats.Docs != 0 && (sc.Stats.Docs != m.Docs || avgLen(sc.Stats.Tokens, sc.Stats.Docs) != avgLen(m.Tokens, m.Docs)) {
		return nil, fmt.Errorf("%w: qdrant collection %s was weighted for %d passages and %d tokens, asked %d and %d", backend.ErrScoring, coll, m.Docs, m.Tokens, sc.Stats.Docs, sc.Stats.Tokens)
	}
	return &LexReader{e: e, coll: coll, m: m, vocab: vocab, avg: avgLen(m.Tokens, m.Docs)}, nil
}

// LexReader searches one collection's BM25. Safe for concurrent use.
type LexReader struct {
	e     *Engine
	coll  string
	m     meta
	vocab map[string]vocabEntry
	avg   float64
}

var _ backend.LexicalReader = (*LexReader)(nil)

// Close releases nothing: the connection belongs to the Engine.
func (r *LexReader) Close() error { return nil }

// Check has nothing to check beside the points: the collection keeps no statistics of its
// deletions (a deleted passage's point is removed, and the weights are the live ones').
func (r *LexReader) Check(context.Context) error { return nil }

// Docs counts the collection's passages.
func (r *LexReader) Docs(ctx context.Context) (int, error) { return r.e.countPassages(ctx, r.coll) }

// Has reports which keys have a passage point.
func (r *LexReader) Has(ctx context.Context, keys []uint32) ([]bool, error) {
	return r.e.has(ctx, r.coll, keys)
}

// DocFreq returns how many passages hold each term, from the collection's vocabulary.
func (r *LexReader) DocFreq(ctx context.Context, terms []string) ([]int, error) {
	out := make([]int, len(terms))
	for i, t := range terms {
		out[i] = r.vocab[t].df
	}
	return out, nil
}

// boundSlack covers float32 rounding in Qdrant's dot product when it bounds exact scores.
const boundSlack = 1e-5

// Search returns bleve's BM25 ranking of the passages that pass the filter (see the package
// comment): candidates by Qdrant's dot product, an upper bound of the exact score, rescored
// exactly, paging on until no unseen passage can beat the n-th.
func (r *LexReader) Search(ctx context.Context, q backend.LexicalQuery) ([]backend.Hit, error) {
	if len(q.Terms) == 0 || q.N <= 0 {
		return nil, nil
	}
	lq, ok := r.newLexQuery(q)
	if !ok {
		return []backend.Hit{}, nil
	}
	for {
		var pts []*qdrant.ScoredPoint
		req := lq.request()
		err := r.e.do(ctx, "bm25 query", r.coll, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			pts, err = c.Query(ctx, req)
			return err
		})
		if err != nil {
			return nil, err
		}
		if lq.add(pts) {
			return lq.result(), nil
		}
	}
}

// sortHits orders hits best first, ties by key compared as decimal strings (search's rule).
func sortHits(h []backend.Hit) {
	sort.Slice(h, func(i, j int) bool {
		if h[i].Score != h[j].Score {
			return h[i].Score > h[j].Score
		}
		return strings.Compare(strconv.FormatUint(uint64(h[i].Key), 10), strconv.FormatUint(uint64(h[j].Key), 10)) < 0
	})
}

// qdrantFilter is f as a payload filter on passage points.
func qdrantFilter(f backend.Filter) *qdrant.Filter {
	out := passagesFilter()
	if !f.DateFrom.IsZero() || !f.DateTo.IsZero() {
		r := &qdrant.DatetimeRange{}
		if !f.DateFrom.IsZero() {
			r.Gte = timestamppb.New(f.DateFrom)
		}
		if !f.DateTo.IsZero() {
			r.Lte = timestamppb.New(f.DateTo)
		}
		out.Must = append(out.Must, qdrant.NewDatetimeRange(fieldDate, r))
	}
	if len(f.Sources) > 0 {
		out.Must = append(out.Must, qdrant.NewMatchKeywords(fieldSource, f.Sources...))
	}
	if len(f.Languages) > 0 {
		out.Must = append(out.Must, qdrant.NewMatchKeywords(fieldLanguage, f.Languages...))
	}
	if len(f.ExcludeLanguages) > 0 {
		out.MustNot = append(out.MustNot, qdrant.NewMatchKeywords(fieldLanguage, f.ExcludeLanguages...))
	}
	// Prose passages have no block type in their payload: "text" is asked for by excluding
	// the other types, which a payload without the field passes.
	switch must, mustNot := f.BlockTypeTerms(); {
	case len(must) > 0:
		out.Must = append(out.Must, qdrant.NewMatchKeywords(fieldBlockType, must...))
	case len(mustNot) > 0:
		out.MustNot = append(out.MustNot, qdrant.NewMatchKeywords(fieldBlockType, mustNot...))
	}
	if f.None {
		// Every passage point has a key: requiring it to be absent matches nothing.
		out.Must = append(out.Must, qdrant.NewIsEmpty(fieldKey))
	}
	return out
}

// has reports which keys have a passage point in coll.
func (e *Engine) has(ctx context.Context, coll string, keys []uint32) ([]bool, error) {
	var pts []*qdrant.RetrievedPoint
	err := e.do(ctx, "get points", coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		pts, err = c.Get(ctx, &qdrant.GetPoints{CollectionName: coll, Ids: keyIDs(keys), WithPayload: qdrant.NewWithPayload(false)})
		return err
	})
	if err != nil {
		return nil, err
	}
	found := make(map[uint64]bool, len(pts))
	for _, p := range pts {
		found[p.GetId().GetNum()] = true
	}
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = found[uint64(k)]
	}
	return out, nil
}

// sparseOf reads a sparse vector from a reply: Qdrant 1.16 servers fill the deprecated
// data/indices fields, newer ones the sparse field.
func sparseOf(v *qdrant.VectorOutput) ([]uint32, []float32) {
	if sv := v.GetSparse(); sv != nil {
		return sv.GetIndices(), sv.GetValues()
	}
	//lint:ignore SA1019 the 1.16 server's format
	return v.GetIndices().GetData(), v.GetData()
}
