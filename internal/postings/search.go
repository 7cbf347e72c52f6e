package postings

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// searchSegment returns the K best passages of seg (best first, ties by key as keyLess
// orders them), scoring with p. It is block-max MaxScore: terms are taken in increasing
// order of their upper bounds; the longest prefix whose bounds cannot lift a passage into the
// top K on their own is non-essential: only passages of the other (essential) terms are
// candidates, and the non-essential terms are looked up for a candidate only while its bound,
// refined by the bound of the block the lookup lands in, can still reach the top K.
func searchSegment(ctx context.Context, seg *Segment, p *plan, q *Query) ([]Hit, error) {
	sc := &scorer{plan: p}
	var tcs []termCursor
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
			ub = max(ub, sc.contribution(i, tf, length))
		}
		tcs = append(tcs, termCursor{c: newCursor(seg, ti), ti: i, ub: ub})
	}
	slices.SortStableFunc(tcs, func(a, b termCursor) int {
		switch {
		case a.ub < b.ub:
			return -1
		case a.ub > b.ub:
			return 1
		}
		return 0
	})
	m, n := len(tcs), float64(len(p.terms))
	prefix := make([]float64, m+1) // prefix[j]: sum of the first j bounds
	for j, tc := range tcs {
		prefix[j+1] = prefix[j] + tc.ub
	}
	// coordBound bounds the share of matched terms of a passage that matches at most c.
	coordBound := func(c int) float64 { return min(1, float64(c)/n) }

	top := newTopK(q.K)
	theta := math.Inf(-1)
	firstEssential := 0
	contrib := make([]float64, len(p.terms))
	matched := make([]bool, len(p.terms))
	for scored := 0; ; scored++ {
		if scored%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		d := uint32(exhausted)
		for _, tc := range tcs[firstEssential:] {
			d = min(d, tc.c.cur)
		}
		if d == exhausted {
			break
		}
		if top.full() {
			// Block-max skip: up to the end of the first essential block to end, no passage
			// can score more than the essential blocks' bounds plus the non-essential terms'.
			upto, bound := uint32(exhausted), prefix[firstEssential]
			for i := firstEssential; i < m; i++ {
				if c := tcs[i].c; c.cur != exhausted {
					upto = min(upto, c.last)
					bound += tcs[i].blockUB(sc)
				}
			}
			if bound*coordBound(m)*(1+pruneSlack) < theta {
				for _, tc := range tcs[firstEssential:] {
					tc.c.advance(upto + 1)
				}
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
		for _, tc := range tcs[firstEssential:] {
			if tc.c.cur == d {
				v := sc.contribution(tc.ti, tc.c.tf(), length)
				contrib[tc.ti], matched[tc.ti] = v, true
				partial += v
				count++
				tc.c.next()
			}
		}
		pruned := false
		for i := firstEssential - 1; i >= 0; i-- {
			// here theta is finite: terms are non-essential only once the top K is full
			if (partial+prefix[i+1])*coordBound(count+i+1)*(1+pruneSlack) < theta {
				pruned = true
				break
			}
			c := tcs[i].c
			if _, ok := c.shallow(d); !ok {
				continue
			}
			blockUB := tcs[i].blockUB(sc)
			if (partial+blockUB+prefix[i])*coordBound(count+i+1)*(1+pruneSlack) < theta {
				pruned = true // not even this block's best with every remaining term's best
				break
			}
			c.advance(d)
			if c.cur == d {
				v := sc.contribution(tcs[i].ti, c.tf(), length)
				contrib[tcs[i].ti], matched[tcs[i].ti] = v, true
				partial += v
				count++
			}
		}
		if !pruned && q.Allow == nil && q.Deleted == nil {
			key = seg.key(d)
		}
		if !pruned && top.offer(Hit{Key: key, Score: p.total(contrib, matched, count)}) && top.full() {
			theta = top.worst().Score
			for firstEssential < m && prefix[firstEssential+1]*coordBound(firstEssential+1)*(1+pruneSlack) < theta {
				firstEssential++
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
