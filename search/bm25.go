package search

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/kairos-rag/kairos/indexer"
)

// Default BM25 parameters (Options.K1, Options.B), chosen on training data (README, "BM25").
const (
	BM25K1 = 1.2
	BM25B  = 0.4
)

// bm25Params records the k1 and b this process scores with. bleve keeps them in package
// variables read at query time, so they cannot differ between indexes of one process: the
// first Open installs its values, and an Open asking for others fails rather than silently
// changing the scores of the indexes already open.
var bm25Params struct {
	sync.Mutex
	k1, b float64
	set   bool
}

func setBM25Params(k1, b float64) error {
	bm25Params.Lock()
	defer bm25Params.Unlock()
	if bm25Params.set {
		if bm25Params.k1 != k1 || bm25Params.b != b {
			return fmt.Errorf("search options: BM25 k1 %v b %v, but this process already scores with k1 %v b %v (bleve keeps them per process)", k1, b, bm25Params.k1, bm25Params.b)
		}
		return nil
	}
	bsearch.BM25_k1, bsearch.BM25_b = k1, b
	bm25Params.k1, bm25Params.b, bm25Params.set = k1, b, true
	return nil
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

// bm25Query builds the scoring query: a disjunction of the query's terms over the text field.
func (ix *Index) bm25Query(text string) (query.Query, bool) {
	terms := ix.terms(text)
	if len(terms) == 0 {
		return nil, false
	}
	clauses := make([]query.Query, len(terms))
	for i, t := range terms {
		q := query.NewTermQuery(t)
		q.SetField(indexer.FieldText)
		clauses[i] = q
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
	window := req.K
	if ix.opts.DocEvidence > 0 {
		window = max(window, ix.opts.Window)
	}
	if req.PerDoc > 0 {
		window = max(window, 3*req.K) // room to fill K after capping
	}
	cands, err := ix.bm25Candidates(ctx, req, window)
	if err != nil {
		return nil, err
	}
	cands = capPerDoc(cands, req.PerDoc, ix.gen.Store)
	return ix.hits(cands[:min(len(cands), req.K)], "bm25")
}

// bm25Candidates returns the n best passages by BM25, with document evidence applied.
func (ix *Index) bm25Candidates(ctx context.Context, req Request, n int) ([]candidate, error) {
	q, ok := ix.bm25Query(req.Text)
	if !ok {
		return nil, nil // nothing searchable (only stop words or punctuation)
	}
	if fq := filterQuery(req.Filters); len(fq) > 0 {
		q = query.NewConjunctionQuery(append([]query.Query{q}, fq...))
	}
	sr := bleve.NewSearchRequestOptions(q, n, 0, false)
	sr.SortBy(bm25Sort)
	if st := ix.gen.Manifest.BM25; st != nil {
		// Score with the manifest's statistics, not bleve's segment-dependent ones.
		ctx = st.Context(ctx)
	}
	res, err := ix.gen.BM25.SearchInContext(ctx, sr)
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	cands := make([]candidate, len(res.Hits))
	for i, h := range res.Hits {
		key, err := strconv.ParseUint(h.ID, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("bm25 hit %q: not a passage key", h.ID)
		}
		cands[i] = candidate{key: uint32(key), bm25: h.Score, hasBM25: true, score: h.Score}
	}
	if ix.opts.DocEvidence > 0 {
		if err := ix.addDocEvidence(cands); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// capPerDoc keeps at most perDoc candidates of each document, in order.
func capPerDoc(cands []candidate, perDoc int, store *indexer.Store) []candidate {
	if perDoc <= 0 {
		return cands
	}
	seen := make(map[string]int, len(cands))
	out := cands[:0]
	for _, c := range cands {
		if c.doc == "" {
			c.doc, _ = store.DocID(c.key) // a bad key fails later, in hits
		}
		if seen[c.doc] < perDoc {
			seen[c.doc]++
			out = append(out, c)
		}
	}
	return out
}

// candidate is a passage between retrieval and the final cut.
type candidate struct {
	key      uint32
	bm25     float64 // BM25 score (before document evidence)
	dense    float64 // similarity to the query vector
	hasBM25  bool
	hasDense bool
	score    float64 // final score
	doc      string
}

// addDocEvidence adds DocEvidence times the scores of the other candidates of the same
// document to each candidate, then re-sorts (ties by passage key).
func (ix *Index) addDocEvidence(cands []candidate) error {
	sums := make(map[string]float64, len(cands))
	for i := range cands {
		doc, err := ix.gen.Store.DocID(cands[i].key)
		if err != nil {
			return err
		}
		cands[i].doc = doc
		sums[doc] += cands[i].bm25
	}
	for i := range cands {
		c := &cands[i]
		c.score = c.bm25 + ix.opts.DocEvidence*(sums[c.doc]-c.bm25)
	}
	sort.SliceStable(cands, byScoreThenKey(cands))
	return nil
}

// hits decodes the passages of the final candidates. Scores carries the components behind a
// fused or adjusted score.
func (ix *Index) hits(cands []candidate, single string) ([]Hit, error) {
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		p, err := ix.gen.Store.Get(c.key)
		if err != nil {
			return nil, err
		}
		hits[i] = Hit{Passage: p, Score: c.score, Rank: i + 1}
		if single == "bm25" && c.score == c.bm25 {
			continue // plain BM25: the score says it all
		}
		if c.hasBM25 || c.hasDense {
			hits[i].Scores = map[string]float64{}
			if c.hasBM25 {
				hits[i].Scores["bm25"] = c.bm25
			}
			if c.hasDense {
				hits[i].Scores["dense"] = c.dense
			}
		}
	}
	return hits, nil
}
