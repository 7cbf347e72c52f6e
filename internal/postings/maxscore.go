package postings

import (
	"context"
	"math/bits"
)

// innerWindow is how many ordinals an inner window of searchSegment covers: the essential
// terms' postings in it are scored term at a time into per-ordinal accumulators, which stay
// in the first- and second-level caches (Lucene's MaxScoreBulkScorer, INNER_WINDOW_SIZE).
// Measured on 1,000 queries of bench scale's 1M index (thread CPU, k 30): 4,096 beats 2,048
// and 1,024 by 4 to 5%. A multiple of 64; tests make it small (windowScratch.size) so that
// small collections span many windows.
const innerWindow = 4096

// windowScratch is the memory of one range search, reused from query to query (Searcher
// pools it): per ordinal of an inner window, an accumulator with the sum of the
// contributions found so far (in the order found: an upper bound's ingredient, never a score)
// and the query terms matched (a bit per term of the plan: the first accTerms in the accumulator,
// the others in more), and, per term, the term frequency there (valid where the mask says
// so); a bit per ordinal with a match; the candidates.
type windowScratch struct {
	size  int     // ordinals per inner window, a multiple of 64: innerWindow but in tests
	acc   []accum // per ordinal
	more  []uint64
	tf    []uint32
	hit   []uint64
	cands []uint32
	all   []uint32
	// matchAt is lookupRun's scratch: the indexes of a block's postings that match
	matchAt []uint32
	words   int // mask words per ordinal in more: the plan's terms past accTerms, in 64s
}

// accum is an ordinal's accumulator: score and mask side by side, so that a posting touches
// one cache line. Eight bytes, so that a window's 4,096 fit the first-level cache. The score
// is a float32: it only bounds (the survivors are scored again in float64), and accSlack
// covers its rounding.
type accum struct {
	score float32
	mask  uint32 // terms 0 to accTerms-1 of the plan
}

// accTerms is the number of a plan's terms whose bits an accum holds.
const accTerms = 32

// accSlack is the factor that widens a bound holding an accumulator's score for a plan of n
// terms, as 1+pruneSlack does for float64 bounds: rounding each contribution to a float32
// and adding it errs by at most 2^-24 of the sum so far, so a sum of at most n terms by at
// most n*2^-24 of itself. Twice that, and pruneSlack besides, leaves a margin.
func accSlack(n int) float64 { return 1 + pruneSlack + float64(n)*0x1p-23 }

// reset sizes w for a plan of n terms. The accumulators are zero between windows (each
// window clears what it set).
func (w *windowScratch) reset(n int) {
	if w.size == 0 {
		w.size = innerWindow
	}
	if w.acc == nil {
		w.acc = make([]accum, w.size)
		w.hit = make([]uint64, w.size/64)
		w.matchAt = make([]uint32, BlockSize)
	}
	w.words = (max(n, accTerms) - accTerms + 63) / 64
	if len(w.more) < w.words*w.size {
		w.more = make([]uint64, w.words*w.size)
	}
	if len(w.tf) < n*w.size {
		w.tf = make([]uint32, n*w.size)
	}
}

// matched is the number of terms matched at offset off.
func (w *windowScratch) matched(off uint32) int {
	n := bits.OnesCount32(w.acc[off].mask)
	if w.words > 0 {
		for _, x := range w.more[int(off)*w.words : int(off+1)*w.words] {
			n += bits.OnesCount64(x)
		}
	}
	return n
}

// has reports whether term t (a plan index) matched at offset off.
func (w *windowScratch) has(t int, off uint32) bool {
	if t < accTerms {
		return w.acc[off].mask&(1<<t) != 0
	}
	return w.more[int(off)*w.words+(t-accTerms)/64]&(1<<((t-accTerms)%64)) != 0
}

// clearAt zeroes the accumulators of offset off.
func (w *windowScratch) clearAt(off uint32) {
	w.acc[off] = accum{}
	if w.words > 0 {
		clear(w.more[int(off)*w.words : int(off+1)*w.words])
	}
}

// note records that term t (a plan index) occurs freq times at offset off, contributing v.
func (w *windowScratch) note(t int, off, freq uint32, v float64) {
	w.tf[t*w.size+int(off)] = freq
	a := &w.acc[off]
	if t < accTerms {
		a.mask |= 1 << t
	} else {
		w.more[int(off)*w.words+(t-accTerms)/64] |= 1 << ((t - accTerms) % 64)
	}
	a.score += float32(v)
}

// searchSegment returns the K best passages of the ordinals [lo, hi) of sp's segment (best
// first, ties by key as keyLess orders them), scoring with p, and raises shared with its own
// k-th score. It is block-max MaxScore as Lucene 9.9 and later run it (MaxScoreBulkScorer):
//
//   - The ordinals are cut into outer windows that end where the current block of an
//     essential term ends. In each, a term's bound is the largest bound of its blocks that
//     overlap the window (the block's largest frequency in its shortest passage), and the
//     terms are taken in increasing order of these bounds: the longest prefix whose bounds
//     cannot lift a passage to the threshold on their own is non-essential there. A window
//     where every term is non-essential is skipped whole. Bounds of the window rather than
//     of the whole segment make most terms of a long query non-essential most of the time.
//   - Inside an outer window, inner windows of innerWindow ordinals are scored term at a
//     time: each essential term's postings add their contribution and frequency to
//     per-ordinal accumulators, with no merge of cursors per passage.
//   - The candidates (ordinals some essential term matched) then meet the non-essential
//     terms from the largest bound down: a candidate whose sum so far plus the bounds of the
//     terms left, times the share of terms it could match, stays below the threshold is
//     dropped before the term's postings are read (or its block decoded); the others look
//     the term up.
//
// Scores are exact: the accumulators only bound, and a candidate that survives is scored
// again from its matched terms' frequencies in bleve's order (plan.sumOrder). Every bound is
// widened by pruneSlack before it is compared, and passages are dropped only when they cannot
// reach the query's top K, so the union of the ranges' hits holds the query's K best, ties
// included.
func searchSegment(ctx context.Context, sp *segPlan, p *plan, q *Query, lo, hi uint32, shared *threshold, ws *windowScratch) ([]Hit, error) {
	seg := sp.seg
	sc := &scorer{plan: p}
	m, n := len(sp.terms), len(p.terms)
	tcs := make([]termCursor, m)
	for i, t := range sp.terms {
		tcs[i] = termCursor{c: newCursorAt(seg, t.info, lo), ti: t.ti, ub: t.ub}
	}
	// coordBound[c] bounds the share of matched terms of a passage that matches at most c: a
	// table, not a division per candidate.
	coordBound := make([]float64, m+1)
	for c := range coordBound {
		coordBound[c] = min(1, float64(c)/float64(n))
	}
	ws.reset(n)
	slack := accSlack(n)
	top := newTopK(q.K)
	theta := 0.0 // the score a passage must reach; 0 (scores are positive) until K are known
	raise := func(v float64) {
		if v > theta {
			theta = v
		}
	}

	// order holds the indexes of tcs in increasing order of their window bounds wmax; the
	// first firstEss are non-essential in the window, sums[i] the sum of the bounds of
	// order[:i+1].
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	wmax := make([]float64, m)
	sums := make([]float64, m)
	firstEss := 0
	// nextTheta is the threshold above which one more term would be non-essential: reached,
	// the window is partitioned afresh.
	nextTheta := 0.0
	partition := func(from, to uint32) bool {
		for j := range tcs {
			wmax[j] = tcs[j].windowMax(sc, from, to)
		}
		for i := 1; i < m; i++ { // insertion sort: a handful of terms, nearly in order already
			for k := i; k > 0 && wmax[order[k]] < wmax[order[k-1]]; k-- {
				order[k], order[k-1] = order[k-1], order[k]
			}
		}
		firstEss = 0
		s := 0.0
		nextTheta = 0
		for firstEss < m {
			ns := s + wmax[order[firstEss]]
			if b := ns * coordBound[firstEss+1] * (1 + pruneSlack); b >= theta {
				nextTheta = b
				break
			}
			s = ns
			sums[firstEss] = s
			firstEss++
		}
		return firstEss < m
	}

	// Lucene's guard against outer windows too short to pay for their bounds: with several
	// essential terms, a window spans at least minWindow ordinals, doubled while windows hold
	// few candidates.
	minWindow := uint32(1)
	var windows, candidates int64
	checked := 0
	outerMin := lo
	for outerMin < hi {
		if checked++; checked%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		raise(shared.load())
		// The window ends where the current block of an essential term of the last partition
		// (every term before the first) ends.
		outerMax := uint32(exhausted)
		for _, j := range order[firstEss:] {
			if e, ok := tcs[j].c.shallow(outerMin); ok {
				outerMax = min(outerMax, e.last+1)
			}
		}
		if m-firstEss > 1 {
			if candidates < windows*32*int64(m) {
				minWindow = min(minWindow<<1, uint32(ws.size))
			} else {
				minWindow = 1
			}
			if outerMin <= exhausted-minWindow {
				outerMax = max(outerMax, outerMin+minWindow)
			}
		}
		outerMax = min(outerMax, hi)
		windows++
		if !partition(outerMin, outerMax) {
			outerMin = outerMax // no passage here can reach the threshold
			continue
		}
		for {
			base := uint32(exhausted)
			for _, j := range order[firstEss:] {
				c := tcs[j].c
				c.advance(outerMin)
				base = min(base, c.cur)
			}
			if base >= outerMax {
				outerMin = outerMax
				break
			}
			innerMax := outerMax
			if outerMax-base > uint32(ws.size) {
				innerMax = base + uint32(ws.size)
			}
			// A posting's contribution is looked up by its passage's length byte: in a
			// collection of millions this window's and the next one's lengths are asked for
			// before the postings need them, so that their misses overlap. This window's
			// again, though the window before asked for its next: a window starts at its
			// terms' next posting, which may lie past that one's end (asking only for the
			// next was slower: docs/benchmarks.md).
			prefetchLines(seg.lens8[base:min(innerMax+uint32(ws.size), uint32(len(seg.lens8)))])
			for _, j := range order[firstEss:] {
				tcs[j].accumulate(sc, ws, base, innerMax)
			}
			// the candidates, in ordinal order; the hit bits are left clear
			cands := ws.cands[:0]
			for wi := range (innerMax - base + 63) / 64 {
				x := ws.hit[wi]
				if x == 0 {
					continue
				}
				ws.hit[wi] = 0
				for x != 0 {
					cands = append(cands, wi*64+uint32(bits.TrailingZeros64(x)))
					x &= x - 1
				}
			}
			candidates += int64(len(cands))
			// cands shrinks as candidates are dropped; all keeps them, for clearing at the end
			all := append(ws.all[:0], cands...)
			if q.Allow != nil || q.Deleted != nil {
				kept := cands[:0]
				for _, off := range cands {
					key := seg.key(base + off)
					if (q.Allow == nil || q.Allow(key)) && (q.Deleted == nil || !q.Deleted.Has(key)) {
						kept = append(kept, off)
					}
				}
				cands = kept
			}
			// the non-essential terms, from the largest bound down
			for i := firstEss - 1; i >= 0 && len(cands) > 0; i-- {
				// Drop the candidates that cannot reach theta even with every term left.
				cands = ws.competitive(cands, sums[i], coordBound[i+1:], theta, slack)
				tc := &tcs[order[i]]
				c := tc.c
				rest := 0.0 // the bounds of the terms after this one
				if i > 0 {
					rest = sums[i-1]
				}
				k := 0
				for x := 0; x < len(cands); {
					off := cands[x]
					d := base + off
					if !c.decoded || d > c.last {
						if _, ok := c.shallow(d); !ok {
							k += copy(cands[k:], cands[x:]) // the term has no posting left
							break
						}
						// The block that may hold d is not decoded: not even its best with
						// every remaining term's best? Then the candidate is out, and the
						// block stays undecoded.
						if !c.decoded && (float64(ws.acc[off].score)+tc.blockUB(sc)+rest)*coordBound[ws.matched(off)+i+1]*slack < theta {
							x++
							continue
						}
						if !c.decoded {
							if c.decode(); c.cur == exhausted {
								k += copy(cands[k:], cands[x:]) // a damaged block: c.err says so
								break
							}
						}
					}
					// The candidates up to the block's last ordinal meet its postings at once.
					y := x + 1
					for y < len(cands) && base+cands[y] <= c.last {
						y++
					}
					run := cands[k : k+copy(cands[k:], cands[x:y])]
					k += len(run)
					x = y
					ws.lookupRun(tc, sc, seg, run, base, c)
				}
				cands = cands[:k]
			}
			// the survivors, scored exactly
			for _, off := range cands {
				cnt := ws.matched(off)
				if float64(ws.acc[off].score)*coordBound[cnt]*slack >= theta {
					d := base + off
					if top.offer(Hit{Key: seg.key(d), Score: ws.exact(sc, off, cnt, seg.length(d))}) && top.full() {
						if w := top.worst().Score; w > theta {
							theta = w
							shared.raise(w)
						}
					}
				}
			}
			for _, off := range all {
				ws.clearAt(off)
			}
			ws.all = all[:0]
			ws.cands = cands[:0]
			outerMin = innerMax
			if theta > nextTheta {
				break // one more term is non-essential now: partition afresh
			}
			if outerMin >= outerMax {
				break
			}
		}
	}
	for _, tc := range tcs {
		if tc.c.err != nil {
			return nil, tc.c.err
		}
	}
	return top.sorted(), nil
}

// competitive keeps the candidates whose sum so far plus rest, times coord[c] for the c terms
// they matched (coord is coordBound shifted by the terms left to look up) and slack
// (accSlack), may reach theta.
// It is a pass of its own: the outcome is hard to predict, and a branchless store keeps it
// from stalling the lookups (Lucene's filterCompetitiveHits). The plan's usual case, at most
// accTerms terms, reads one accumulator a candidate, its fields held in registers.
func (w *windowScratch) competitive(cands []uint32, rest float64, coord []float64, theta, slack float64) []uint32 {
	k := 0
	if w.words == 0 {
		acc := w.acc
		for _, off := range cands {
			a := acc[off]
			cands[k] = off
			if (float64(a.score)+rest)*coord[bits.OnesCount32(a.mask)]*slack >= theta {
				k++
			}
		}
		return cands[:k]
	}
	for _, off := range cands {
		cands[k] = off
		if (float64(w.acc[off].score)+rest)*coord[w.matched(off)]*slack >= theta {
			k++
		}
	}
	return cands[:k]
}

// lookupRun notes term tc's postings at the candidates run (offsets from base, increasing,
// every one at or before the decoded block's last ordinal and at or after its current
// posting) and leaves the cursor at the first posting past the last candidate (or at the
// block's last). The candidates are marked in the hit bits (clear while the non-essential
// terms are looked up) and the block's postings from the first candidate to the last test
// their bit without a branch: a candidate meets two or three postings on average, and a
// search per candidate took a mispredicted branch at each.
func (w *windowScratch) lookupRun(tc *termCursor, sc *scorer, seg *Segment, run []uint32, base uint32, c *cursor) {
	hit := w.hit
	for _, off := range run {
		hit[off/64] |= 1 << (off % 64)
	}
	ords := c.ords[:c.n]
	first, last := base+run[0], base+run[len(run)-1]
	j := c.i
	for ords[j] < first {
		j++
	}
	at := w.matchAt[:c.n]
	nm := 0
	for ; j < len(ords) && ords[j] <= last; j++ {
		off := ords[j] - base
		at[nm] = uint32(j)
		nm += int(hit[off/64] >> (off % 64) & 1)
	}
	for _, off := range run {
		hit[off/64] = 0
	}
	if nm > 0 {
		tfs := c.freqs()
		for _, m := range at[:nm] {
			d := ords[m]
			w.note(tc.ti, d-base, tfs[m], sc.contribution(tc.ti, tfs[m], seg.length(d)))
		}
	}
	c.i = min(j, c.n-1)
	c.cur = ords[c.i]
}

// exact is the score of the candidate at off, which matched cnt terms: bleve's sum of their
// contributions in plan.sumOrder, times the share of the query's terms matched (plan.total).
func (w *windowScratch) exact(sc *scorer, off uint32, cnt int, length uint32) float64 {
	var sum float64
	for _, i := range sc.sumOrder {
		if w.has(i, off) {
			sum += sc.contribution(i, w.tf[i*w.size+int(off)], length)
		}
	}
	return sum * (float64(cnt) / float64(len(sc.terms)))
}

// windowMax bounds the term's contribution to the ordinals [from, to): the largest bound of
// its blocks that overlap them (at most its bound in the segment), 0 when it has no posting
// there. The cursor moves to the block that holds from, without decoding it.
func (tc *termCursor) windowMax(sc *scorer, from, to uint32) float64 {
	c := tc.c
	if c.cur == exhausted || (c.decoded && c.cur >= to) {
		return 0
	}
	e, ok := c.shallow(from)
	if !ok {
		return 0
	}
	best := tc.blockUB(sc)
	for b := c.blk + 1; e.last < to-1 && b < c.ti.nblocks && best < tc.ub; b++ {
		e = c.s.blockAt(c.ti.firstBlock + b)
		best = max(best, sc.contribution(tc.ti, e.maxTF, max(e.minLen, 1)))
	}
	return min(best, tc.ub)
}

// accumulate adds the term's postings in [base, end) to the window's accumulators and leaves
// its cursor at its first posting at or after end.
func (tc *termCursor) accumulate(sc *scorer, w *windowScratch, base, end uint32) {
	c := tc.c
	seg := c.s
	t := tc.ti
	tf := w.tf[t*w.size : (t+1)*w.size]
	// Most postings occur once in a passage whose length fits a byte: their contribution is
	// the term's row of the scorer's cache at that byte, filled on first use (0 until then,
	// and always at lenEscape).
	row, lens8 := sc.onceRow(t), seg.lens8
	acc, hit := w.acc, w.hit
	for c.cur < end {
		i := c.i
		ords, tfs := c.ords[:c.n], c.freqs()[:c.n]
		for ; i < len(ords); i++ {
			d := ords[i]
			if d >= end {
				break
			}
			off := d - base
			f := tfs[i]
			tf[off] = f
			hit[off/64] |= 1 << (off % 64)
			var v float64
			if f == 1 {
				v = row[lens8[d]]
			}
			if v == 0 {
				v = sc.contribution(t, f, seg.length(d))
			}
			if t < accTerms {
				a := &acc[off]
				a.mask |= 1 << t
				a.score += float32(v)
			} else {
				w.note(t, off, f, v)
			}
		}
		if i < c.n {
			c.i, c.cur = i, c.ords[i]
			return
		}
		c.blk++
		c.decode()
	}
}
