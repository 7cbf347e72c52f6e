package search

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// Default BM25 parameters (Options.K1, Options.B), chosen on training data (README, "BM25").
// They are backend.DefaultBM25, the builds' too: an index on Qdrant bakes them into its weights.
const (
	BM25K1 = backend.DefaultK1
	BM25B  = backend.DefaultB
)

// terms analyses text as the index did, keeping each distinct term once: in the index's
// language, or, multilingual, once in each language searched (langs), each analysis tagged
// with its language so that it matches only the passages of that language.
func (ix *Index) terms(text string, langs []string) ([]string, error) {
	return ix.analysis.QueryTerms(text, langs)
}

// filter resolves the request's filters for the engines: the languages searched
// (searchLanguages) replace Languages and ExcludeLanguages; the other fields pass as they are.
func (ix *Index) filter(f Filters) backend.Filter {
	bf := f
	bf.Languages, bf.ExcludeLanguages = nil, nil
	langs, narrowed := ix.searchLanguages(f)
	switch {
	case len(langs) == 0:
		bf.None = true // no language of the index was asked for
	case narrowed:
		bf.Languages = langs
	}
	return bf
}

// searchLanguages resolves the language filter against the index's languages: the languages
// searched, and whether they are fewer than the index's (only then need engines filter: every
// passage of a single-language index is in its language, stored or not).
func (ix *Index) searchLanguages(f Filters) ([]string, bool) {
	if len(f.Languages) == 0 && len(f.ExcludeLanguages) == 0 {
		return ix.langs, false
	}
	var out []string
	for _, l := range ix.langs {
		if (len(f.Languages) == 0 || hasLanguage(f.Languages, l)) && !hasLanguage(f.ExcludeLanguages, l) {
			out = append(out, l)
		}
	}
	return out, len(out) < len(ix.langs)
}

func hasLanguage(list []string, l string) bool {
	for _, x := range list {
		if langanalysis.Normalize(x) == l {
			return true
		}
	}
	return false
}

func (ix *Index) searchBM25(ctx context.Context, req Request) ([]Hit, error) {
	window := req.K
	if ix.opts.DocEvidence > 0 {
		window = max(window, ix.opts.Window)
	}
	if req.PerDoc > 0 {
		window = max(window, 3*req.K) // room to fill K after capping
	}
	cands, err := ix.cappedCandidates(ctx, req, window, func(n int) ([]candidate, bool, error) {
		c, err := ix.bm25Candidates(ctx, req, n)
		return c, len(c) >= n, err
	})
	if err != nil {
		return nil, err
	}
	return ix.final(ctx, cands, req, "bm25")
}

// maxPerDocWindow bounds how many candidates a search with a per-document cap fetches to fill
// its k: a document of more passages than that, all of them above every other match, still
// leaves the search short.
const maxPerDocWindow = 4096

// cappedCandidates fetches n candidates (fetch also says whether the engine had more) and caps
// them per document (Request.PerDoc); while the cap leaves fewer than k of a window the engine
// filled, it fetches four times as many, up to maxPerDocWindow (or 3 x k when that is more).
// A few long documents would otherwise fill the window: a document of 40 passages above 12
// others of one each left a search for 10, one a document, with 1 to 3 hits.
func (ix *Index) cappedCandidates(ctx context.Context, req Request, n int, fetch func(n int) ([]candidate, bool, error)) ([]candidate, error) {
	for {
		cands, more, err := fetch(n)
		if err != nil {
			return nil, err
		}
		if cands, err = capPerDoc(ctx, cands, req.PerDoc, ix.gen.Passages); err != nil {
			return nil, err
		}
		// A vector engine fills any window, so a dense search over fewer documents than k
		// (a narrow filter) fetches up to the bound: five searches at most.
		if req.PerDoc <= 0 || len(cands) >= req.K || !more || n >= max(maxPerDocWindow, 3*req.K) {
			return cands, nil
		}
		n = min(4*n, max(maxPerDocWindow, 3*req.K))
	}
}

// bm25Candidates returns the n best passages by BM25, with document evidence applied.
func (ix *Index) bm25Candidates(ctx context.Context, req Request, n int) ([]candidate, error) {
	langs, _ := ix.searchLanguages(req.Filters)
	terms, err := ix.terms(req.Text, langs)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return nil, nil // nothing searchable (only stop words or punctuation)
	}
	hits, err := ix.gen.Lexical.Search(ctx, backend.LexicalQuery{Terms: terms, N: n, Filter: ix.filter(req.Filters)})
	if err != nil {
		return nil, err
	}
	return ix.bm25Of(ctx, hits)
}

// bm25Of turns the lexical engine's hits into candidates, with document evidence applied.
func (ix *Index) bm25Of(ctx context.Context, hits []backend.Hit) ([]candidate, error) {
	cands := make([]candidate, len(hits))
	for i, h := range hits {
		cands[i] = candidate{key: h.Key, bm25: h.Score, hasBM25: true, score: h.Score}
	}
	if ix.opts.DocEvidence > 0 {
		if err := ix.addDocEvidence(ctx, cands); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// capPerDoc keeps at most perDoc candidates of each document, in order. The document ids it
// lacks are read in one DocIDs call (one request on a remote store), and a failure to read
// them is the search's error.
func capPerDoc(ctx context.Context, cands []candidate, perDoc int, store backend.Passages) ([]candidate, error) {
	if perDoc <= 0 {
		return cands, nil
	}
	var keys []uint32
	var at []int
	for i, c := range cands {
		if c.doc == "" {
			keys, at = append(keys, c.key), append(at, i)
		}
	}
	if len(keys) > 0 {
		docs, err := store.DocIDs(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("capping passages per document: %w", err)
		}
		for j, i := range at {
			cands[i].doc = docs[j]
		}
	}
	seen := make(map[string]int, len(cands))
	out := cands[:0]
	for _, c := range cands {
		if seen[c.doc] < perDoc {
			seen[c.doc]++
			out = append(out, c)
		}
	}
	return out, nil
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
func (ix *Index) addDocEvidence(ctx context.Context, cands []candidate) error {
	sums := make(map[string]float64, len(cands))
	docs, err := ix.gen.Passages.DocIDs(ctx, candidateKeys(cands))
	if err != nil {
		return err
	}
	for i, doc := range docs {
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
func (ix *Index) hits(ctx context.Context, cands []candidate, single string) ([]Hit, error) {
	hits := make([]Hit, len(cands))
	ps, err := ix.gen.Passages.GetMany(ctx, candidateKeys(cands))
	if err != nil {
		return nil, err
	}
	for i, c := range cands {
		p := ps[i]
		if p.Language == "" {
			p.Language = ix.gen.Manifest.Language() // a single-language index stores none
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
			if single == "bm25" {
				// The score is bm25 plus what the document's other candidates added
				// (Options.DocEvidence): say how much, so the two add up.
				hits[i].Scores[ScoreDocEvidence] = c.score - c.bm25
			}
		}
	}
	return hits, nil
}

func candidateKeys(cands []candidate) []uint32 {
	keys := make([]uint32, len(cands))
	for i, c := range cands {
		keys[i] = c.key
	}
	return keys
}

// DocFreq returns, for each word, how many live passages of the index hold it (its terms, as
// the index analyses them in its languages, summed: a passage has one language), and how many
// live passages the index has: chat's TermStats, by which the attribution check tells rare
// words. A word the analyser drops (a stop word) is held by every passage.
func (ix *Index) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	m := ix.gen.Manifest
	n := m.Counts.Passages
	out := make([]int, len(words))
	for i, w := range words {
		terms, err := ix.terms(w, ix.langs)
		if err != nil {
			return nil, 0, err
		}
		if len(terms) == 0 {
			out[i] = n
			continue
		}
		dfs, err := ix.gen.Lexical.DocFreq(ctx, slices.Compact(slices.Sorted(slices.Values(terms))))
		if err != nil {
			return nil, 0, err
		}
		for _, df := range dfs {
			out[i] += df
		}
	}
	return out, n, nil
}
