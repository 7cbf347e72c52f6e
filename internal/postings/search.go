package postings

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
)

// KeySet is a set of passage keys, such as Kairos's tombstones.
type KeySet interface {
	Has(key uint32) bool
}

// Query is one BM25 search.
type Query struct {
	// Terms are the query's analysed terms, each once, in query order (as search analyses a
	// query: the order decides how bleve sums when there are more than ten).
	Terms []string
	K     int // hits wanted; must be positive
	// Allow, when set, admits only the passages for which it returns true. It is applied
	// inside the search, before scoring, so K hits come back whenever K allowed passages
	// match. It must be safe for concurrent use (segments are searched in parallel).
	Allow func(key uint32) bool
	// Deleted holds passages to leave out (tombstones).
	Deleted KeySet
	// DeletedDocFreq, when set, returns how many of the Deleted passages contain a term; it is
	// subtracted from the segments' document frequency, so that idf (and the order bleve sums
	// in) counts the live passages only, as bleve's does and as a clean build of them would.
	// Without it the deleted passages' postings still count. The pruning needs nothing more:
	// its bounds are computed per query from the plan's idf, over postings that include the
	// deleted ones, so they stay upper bounds of the live passages' scores.
	DeletedDocFreq func(term string) int
}

// Hit is one retrieved passage.
type Hit struct {
	Key   uint32
	Score float64
}

// pruneSlack widens every upper bound before it is compared with the threshold: a bound is a
// sum in another order than the exact score's, and may round a few units in the last place
// below it. A passage is pruned only when its bound is clearly below the k-th score.
const pruneSlack = 1e-9

// maxQueryTerms bounds a query's distinct terms: a window counts the terms each passage
// matched in 16 bits (windowScratch.count).
const maxQueryTerms = 1<<16 - 1

// termCursor is a query term's cursor in one segment, with its upper bound.
type termCursor struct {
	c  *cursor
	ti int     // index in plan.terms
	ub float64 // largest contribution of the term in this segment
}

// segTerm is a query term found in a segment: its dictionary entry and its upper bound there.
type segTerm struct {
	info termInfo
	ti   int // index in plan.terms
	ub   float64
}

// segPlan is a query's terms in one segment, in increasing order of their upper bounds (the
// MaxScore order). It is computed once per segment and shared by the ranges searched.
type segPlan struct {
	seg   *Segment
	terms []segTerm
}

// planSegment looks the plan's terms up in seg and bounds their contributions there by the
// term's frontier (its Pareto-best pairs of frequency and length).
func planSegment(seg *Segment, p *plan) (*segPlan, error) {
	sc := &scorer{plan: p}
	sp := &segPlan{seg: seg}
	for i, w := range p.terms {
		ti, ok, err := seg.lookup(w.term)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		ub := 0.0
		for j := uint64(0); j < ti.frontN; j++ {
			tf, length := seg.frontierPair(ti, j)
			if tf == 0 || length == 0 {
				return nil, seg.corrupt("term %q: frontier pair (%d, %d)", w.term, tf, length)
			}
			ub = max(ub, sc.compute(i, tf, length)) // once per term: no cache to allocate
		}
		sp.terms = append(sp.terms, segTerm{info: ti, ti: i, ub: ub})
	}
	slices.SortStableFunc(sp.terms, func(a, b segTerm) int {
		switch {
		case a.ub < b.ub:
			return -1
		case a.ub > b.ub:
			return 1
		}
		return 0
	})
	return sp, nil
}

// threshold is the k-th best score found so far by any of the ranges searched for one query
// (0: none yet). Each range keeps its own top K, so its k-th score is a lower bound of the
// query's k-th score; publishing the largest lets every range prune with it, and a range
// searched after another starts pruning at once instead of after its own first K hits.
type threshold struct{ bits atomic.Uint64 }

func (t *threshold) load() float64 { return math.Float64frombits(t.bits.Load()) }

// raise lifts the threshold to v if v is larger.
func (t *threshold) raise(v float64) {
	for {
		old := t.bits.Load()
		if math.Float64frombits(old) >= v || t.bits.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

// blockUB is the largest contribution of the term in the block its cursor is in (decoded
// or reached by shallow), computed once per block.
func (tc *termCursor) blockUB(sc *scorer) float64 {
	c := tc.c
	if c.ubBlk != c.blk+1 {
		e := c.s.blockAt(c.ti.firstBlock + c.blk)
		c.ub, c.ubBlk = sc.contribution(tc.ti, e.maxTF, max(e.minLen, 1)), c.blk+1
	}
	return c.ub
}

// checkQuery validates q.
func checkQuery(q *Query) error {
	if q.K <= 0 {
		return fmt.Errorf("postings query: k %d must be positive", q.K)
	}
	if len(q.Terms) > maxQueryTerms {
		return fmt.Errorf("postings query: %d terms, at most %d", len(q.Terms), maxQueryTerms)
	}
	seen := make(map[string]bool, len(q.Terms))
	for _, t := range q.Terms {
		if seen[t] {
			return fmt.Errorf("postings query: term %q given twice (terms must be distinct)", t)
		}
		seen[t] = true
	}
	return nil
}
