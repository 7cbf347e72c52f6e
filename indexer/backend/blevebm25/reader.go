package blevebm25

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Reader searches one committed generation's bleve index. It is safe for concurrent use.
type Reader struct {
	idx   bleve.Index
	stats *bsearch.BM25Stats
}

var _ backend.LexicalReader = (*Reader)(nil)

// Index returns the bleve index, for tests and tools that inspect it.
func (r *Reader) Index() bleve.Index { return r.idx }

// Context returns ctx carrying the reader's collection statistics for bleve's scorer, for
// tests and tools that search Index directly and must score as Search does.
func (r *Reader) Context(ctx context.Context) context.Context {
	if r.stats == nil {
		return ctx
	}
	return context.WithValue(ctx, bsearch.BM25StatsKey, r.stats)
}

// Close releases the index files.
func (r *Reader) Close() error { return r.idx.Close() }

// Check has nothing to check: bleve keeps no statistics of its own beside its index.
func (r *Reader) Check(context.Context) error { return nil }

// Docs is the number of passages indexed.
func (r *Reader) Docs(ctx context.Context) (int, error) {
	n, err := r.idx.DocCount()
	return int(n), err
}

// DocFreq returns how many passages hold each term in the text field.
func (r *Reader) DocFreq(ctx context.Context, terms []string) ([]int, error) {
	adv, err := r.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("blevebm25: %w", err)
	}
	ir, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("blevebm25: %w", err)
	}
	defer ir.Close()
	out := make([]int, len(terms))
	for i, t := range terms {
		tfr, err := ir.TermFieldReader(ctx, []byte(t), FieldText, false, false, false)
		if err != nil {
			return nil, fmt.Errorf("blevebm25: document frequency of %q: %w", t, err)
		}
		out[i] = int(tfr.Count())
		tfr.Close()
	}
	return out, nil
}

// bm25Sort is the bleve sort of a BM25 search: best score first, then passage key as bleve
// compares ids, as decimal strings (backend.Hit's tie rule).
var bm25Sort = []string{"-_score", "_id"}

// Search returns the q.N best passages for the terms that pass q.Filter.
func (r *Reader) Search(ctx context.Context, q backend.LexicalQuery) ([]backend.Hit, error) {
	if len(q.Terms) == 0 || q.N <= 0 {
		return nil, nil
	}
	clauses := make([]query.Query, len(q.Terms))
	for i, t := range q.Terms {
		tq := query.NewTermQuery(t)
		tq.SetField(FieldText)
		clauses[i] = tq
	}
	var bq query.Query = query.NewDisjunctionQuery(clauses)
	if fq := filterQuery(q.Filter); len(fq) > 0 {
		bq = query.NewConjunctionQuery(append([]query.Query{bq}, fq...))
	}
	if nq := excludeQuery(q.Filter); nq != nil {
		// A boolean query with a single must clause scores as that clause does.
		bq = query.NewBooleanQuery([]query.Query{bq}, nil, []query.Query{nq})
	}
	sr := bleve.NewSearchRequestOptions(bq, q.N, 0, false)
	sr.SortBy(bm25Sort)
	// Score with the manifest's statistics, not bleve's segment-dependent ones.
	res, err := r.idx.SearchInContext(r.Context(ctx), sr)
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	hits := make([]backend.Hit, len(res.Hits))
	for i, h := range res.Hits {
		key, err := strconv.ParseUint(h.ID, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("bm25 hit %q: not a passage key", h.ID)
		}
		hits[i] = backend.Hit{Key: uint32(key), Score: h.Score}
	}
	return hits, nil
}

// Has reports which keys the index holds.
func (r *Reader) Has(ctx context.Context, keys []uint32) ([]bool, error) {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = strconv.FormatUint(uint64(k), 10)
	}
	req := bleve.NewSearchRequestOptions(query.NewDocIDQuery(ids), len(ids), 0, false)
	res, err := r.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	found := make(map[string]bool, len(res.Hits))
	for _, h := range res.Hits {
		found[h.ID] = true
	}
	out := make([]bool, len(keys))
	for i, id := range ids {
		out[i] = found[id]
	}
	return out, nil
}

// bleveFirstInstant and bleveLastInstant bound the dates a bleve range query takes (its
// dates are nanoseconds since 1970 in an int64, and it refuses bounds near the ends).
var (
	bleveFirstInstant = query.MinRFC3339CompatibleTime
	bleveLastInstant  = query.MaxRFC3339CompatibleTime
)

// filterQuery returns the filter as queries that restrict but do not score (boost 0).
func filterQuery(f backend.Filter) []query.Query {
	if f.None {
		return []query.Query{query.NewMatchNoneQuery()}
	}
	var out []query.Query
	if !f.DateFrom.IsZero() || !f.DateTo.IsZero() {
		from, to := f.DateFrom, f.DateTo
		// bleve refuses a bound outside 1677..2262 as an error; a bound there still means
		// something: a lower one before keeps every dated passage, an upper one none.
		if !to.IsZero() && to.Before(bleveFirstInstant) || !from.IsZero() && from.After(bleveLastInstant) {
			return []query.Query{query.NewMatchNoneQuery()}
		}
		if !from.IsZero() && from.Before(bleveFirstInstant) {
			from = bleveFirstInstant
		}
		if to.After(bleveLastInstant) {
			to = bleveLastInstant
		}
		t := true
		q := query.NewDateRangeInclusiveQuery(from, to, &t, &t)
		q.SetField(FieldDate)
		q.SetBoost(0)
		out = append(out, q)
	}
	if len(f.Sources) > 0 {
		any := make([]query.Query, len(f.Sources))
		for i, s := range f.Sources {
			q := query.NewTermQuery(s)
			q.SetField(FieldSource)
			q.SetBoost(0)
			any[i] = q
		}
		out = append(out, query.NewDisjunctionQuery(any))
	}
	if len(f.Languages) > 0 {
		out = append(out, anyTerm(FieldLanguage, f.Languages))
	}
	if must, _ := f.BlockTypeTerms(); len(must) > 0 {
		out = append(out, anyTerm(FieldBlockType, must))
	}
	return out
}

// excludeQuery is what the filter excludes, languages and block types, as one query matching
// any of them; nil when it excludes nothing.
func excludeQuery(f backend.Filter) query.Query {
	var any []query.Query
	if len(f.ExcludeLanguages) > 0 {
		any = append(any, anyTerm(FieldLanguage, f.ExcludeLanguages))
	}
	if _, mustNot := f.BlockTypeTerms(); len(mustNot) > 0 {
		any = append(any, anyTerm(FieldBlockType, mustNot))
	}
	if len(any) == 0 {
		return nil
	}
	return query.NewDisjunctionQuery(any)
}

// anyTerm matches the passages whose keyword field holds one of values, without scoring.
func anyTerm(field string, values []string) query.Query {
	any := make([]query.Query, len(values))
	for i, v := range values {
		q := query.NewTermQuery(v)
		q.SetField(field)
		q.SetBoost(0)
		any[i] = q
	}
	return query.NewDisjunctionQuery(any)
}

// statsFor converts the manifest's statistics to bleve's: bleve's average length is
// ceil(FieldCardinality / DocCount), so the total token count as cardinality makes it the
// mean number of tokens per live passage, rounded up as bleve's formula does. Without
// statistics (an empty index), bleve's own are used.
func statsFor(s backend.CollectionStats) *bsearch.BM25Stats {
	total := int(s.Tokens)
	if s.Docs == 0 && total == 0 {
		return nil
	}
	card := map[string]int{FieldText: total, FieldDoc: total, FieldSource: total, FieldDate: total, FieldLanguage: total, FieldBlockType: total}
	return &bsearch.BM25Stats{DocCount: float64(s.Docs), FieldCardinality: card}
}

// params records the k1 and b this process scores with (see the package comment).
var params struct {
	sync.Mutex
	p   backend.BM25Params
	set bool
}

// setParams installs p. Zero parameters (a reader opened only to be checked or counted) leave
// the process's as they are.
func setParams(p backend.BM25Params) error {
	if p == (backend.BM25Params{}) {
		return nil
	}
	if p.K1 < 0 || p.B < 0 || p.B > 1 {
		return fmt.Errorf("%w: BM25 k1 %v must be >= 0 and b %v in [0,1]", backend.ErrScoring, p.K1, p.B)
	}
	params.Lock()
	defer params.Unlock()
	if params.set {
		if params.p != p {
			return fmt.Errorf("%w: BM25 k1 %v b %v, but this process already scores with k1 %v b %v (bleve keeps them per process)", backend.ErrScoring, p.K1, p.B, params.p.K1, params.p.B)
		}
		return nil
	}
	bsearch.BM25_k1, bsearch.BM25_b = p.K1, p.B
	params.p, params.set = p, true
	return nil
}
