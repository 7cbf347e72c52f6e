package postings

import (
	"context"
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

// ctxCheckEvery is how many candidate passages a segment search scores between checks of
// its context.
const ctxCheckEvery = 4096

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

// searchSegment returns the K best passages of the ordinals [lo, hi) of sp's segment (best
// first, ties by key as keyLess orders them), scoring with p, and raises shared with its own
// k-th score. It is block-max MaxScore: terms are taken in increasing order of their upper
// bounds; the longest prefix whose bounds cannot lift a passage into the top K on their own
// is non-essential: only passages of the other (essential) terms are candidates, and the
// non-essential terms are looked up for a candidate only while its bound, refined by the
// bound of the block the lookup lands in, can still reach the top K. The threshold it prunes
// with is the larger of its own k-th score and shared's: passages are pruned only when they
// cannot reach the query's top K, so the union of the ranges' hits holds the query's K best.
func searchSegment(ctx context.Context, sp *segPlan, p *plan, q *Query, lo, hi uint32, shared *threshold) ([]Hit, error) {
	seg := sp.seg
	sc := &scorer{plan: p}
	tcs := make([]termCursor, len(sp.terms))
	for i, t := range sp.terms {
		tcs[i] = termCursor{c: newCursorAt(seg, t.info, lo), ti: t.ti, ub: t.ub}
	}
	m, n := len(tcs), float64(len(p.terms))
	prefix := make([]float64, m+1) // prefix[j]: sum of the first j bounds
	for j, tc := range tcs {
		prefix[j+1] = prefix[j] + tc.ub
	}
	// coordBound[c] bounds the share of matched terms of a passage that matches at most c: a
	// table, not a division per candidate (10% of the time of the slowest queries at 10M).
	coordBound := make([]float64, m+1)
	for c := range coordBound {
		coordBound[c] = min(1, float64(c)/n)
	}

	top := newTopK(q.K)
	// theta is the score a passage must reach; 0 (scores are positive) until K are known.
	theta := 0.0
	firstEssential := 0
	// The next candidate d (the least ordinal of the essential cursors), computed while the
	// last candidate's essential terms were scored; dValid is false when it must be computed
	// afresh (the essential set or the cursors changed otherwise).
	d, dValid := uint32(0), false
	// The block-max bound of the essential terms' current blocks (blockSum, plus the
	// non-essential terms' bounds) holds for every ordinal up to blockUpto, the end of the
	// first of those blocks to end: the essential cursors move only forward by one posting
	// until d passes it, so it is computed once per block boundary, not once per candidate
	// (a quarter of the time of the slowest queries at 10M). A skip or a change of the
	// essential set computes it afresh.
	blockUpto, blockSum, blockValid := uint32(0), 0.0, false
	lift := func(v float64) {
		theta = v
		for firstEssential < m && prefix[firstEssential+1]*coordBound[firstEssential+1]*(1+pruneSlack) < theta {
			firstEssential++
			dValid, blockValid = false, false
		}
	}
	contrib := make([]float64, len(p.terms))
	matched := make([]bool, len(p.terms))
	for scored := 0; ; scored++ {
		if scored%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if v := shared.load(); v > theta {
			lift(v)
		}
		if !dValid {
			d = exhausted
			for _, tc := range tcs[firstEssential:] {
				d = min(d, tc.c.cur)
			}
		}
		dValid = false
		if d >= hi {
			break
		}
		if theta > 0 {
			// Block-max skip: up to the end of the first essential block to end, no passage
			// can score more than the essential blocks' bounds plus the non-essential terms'.
			if !blockValid || d > blockUpto {
				blockUpto, blockSum, blockValid = exhausted, prefix[firstEssential], true
				for i := firstEssential; i < m; i++ {
					if c := tcs[i].c; c.cur != exhausted {
						blockUpto = min(blockUpto, c.last)
						blockSum += tcs[i].blockUB(sc)
					}
				}
			}
			if blockSum*coordBound[m]*(1+pruneSlack) < theta {
				for _, tc := range tcs[firstEssential:] {
					tc.c.advance(blockUpto + 1)
				}
				blockValid = false
				continue
			}
		}
		var key uint32
		if q.Allow != nil || q.Deleted != nil {
			key = seg.key(d)
			if (q.Allow != nil && !q.Allow(key)) || (q.Deleted != nil && q.Deleted.Has(key)) {
				for _, tc := range tcs[firstEssential:] {
					if tc.c.cur == d {
						tc.c.next()
					}
				}
				continue
			}
		}
		length := seg.length(d)
		partial, count := 0.0, 0
		next := uint32(exhausted)
		for _, tc := range tcs[firstEssential:] {
			if tc.c.cur == d {
				v := sc.contribution(tc.ti, tc.c.tf(), length)
				contrib[tc.ti], matched[tc.ti] = v, true
				partial += v
				count++
				tc.c.next()
			}
			next = min(next, tc.c.cur)
		}
		cand := d
		d, dValid = next, true
		pruned := false
		for i := firstEssential - 1; i >= 0; i-- {
			// here theta is positive: terms are non-essential only once a threshold is known
			if (partial+prefix[i+1])*coordBound[count+i+1]*(1+pruneSlack) < theta {
				pruned = true
				break
			}
			c := tcs[i].c
			if _, ok := c.shallow(cand); !ok {
				continue
			}
			blockUB := tcs[i].blockUB(sc)
			if (partial+blockUB+prefix[i])*coordBound[count+i+1]*(1+pruneSlack) < theta {
				pruned = true // not even this block's best with every remaining term's best
				break
			}
			c.advance(cand)
			if c.cur == cand {
				v := sc.contribution(tcs[i].ti, c.tf(), length)
				contrib[tcs[i].ti], matched[tcs[i].ti] = v, true
				partial += v
				count++
			}
		}
		if !pruned && q.Allow == nil && q.Deleted == nil {
			key = seg.key(cand)
		}
		if !pruned && top.offer(Hit{Key: key, Score: p.total(contrib, matched, count)}) && top.full() {
			if w := top.worst().Score; w > theta {
				shared.raise(w)
				lift(w)
			}
		}
		clear(matched)
	}
	for _, tc := range tcs {
		if tc.c.err != nil {
			return nil, tc.c.err
		}
	}
	return top.sorted(), nil
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
	seen := make(map[string]bool, len(q.Terms))
	for _, t := range q.Terms {
		if seen[t] {
			return fmt.Errorf("postings query: term %q given twice (terms must be distinct)", t)
		}
		seen[t] = true
	}
	return nil
}
