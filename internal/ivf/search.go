package ivf

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Result is one hit: a key and its score, the cosine similarity of its int8 vector with the
// query. Results are ordered best first, ties by ascending key.
type Result struct {
	Key   uint32
	Score float32
}

// Search constants.
const (
	// bruteProbeBelow: with this many lists or fewer, the lists to probe are found by comparing
	// the query with every centroid rather than through the graph: at 4,096 lists, 50
	// microseconds against 145 for the graph's search (ef 144, a million vectors, one core).
	bruteProbeBelow = 8192
	// graphBeam: past bruteProbeBelow lists, the graph over the centroids is searched with a
	// beam of this many times the lists to probe. With 1.5 times, at 40M vectors (16,384
	// lists) probe 48 with 1,024 rescored found 0.9592 of the exact top 10: the beam missed
	// lists nearer the query than those it probed. With 3 times, 0.9800 at about the same
	// rate; 5 times found no more at equal rates.
	graphBeam = 3
	// selectivitySample is how many positions a filtered search first tries its filter on to
	// estimate the share of vectors that pass. While at most one in selectivitySample of
	// those tried passes, and fewer than selectivityPassing, it tries as many again, up to
	// selectivityMaxSample: a filter keeping 30 passages of 100,000 passes none of 256 in 93%
	// of samples, where the guess of half a pass in 256 made its probe miss most of them.
	// Sampling on until 16 passed whatever the share was tried and not kept: at 10M vectors
	// a filter keeping 1% then probed more lists, for 0.0076 to 0.0094 more recall@10 at
	// 0.48 to 0.81 times the queries a second.
	selectivitySample    = 256
	selectivityPassing   = 16
	selectivityMaxSample = 1 << 16
	// minPassing: a filtered search probes lists holding at least this many times the
	// candidates it rescores of vectors that pass, so that the rescoring chooses among passing
	// vectors near the query rather than among all the few it met.
	minPassing = 4
	// scannedPerRescore: unless its caller names a number, a search rescores at least one
	// candidate for every this many vectors in the lists it probes that pass its filter. The
	// one-bit estimates rank a true neighbour below a share of the vectors scanned, not below
	// a fixed number of them: at 10M topic-fixture vectors (8,192 lists) and probe 32,
	// rescoring 320 of the 39,000 found 0.868 of the exact top 10 and 640 found 0.892; at 1M
	// (4,096 lists) and the default probe 64, 320 of 15,600 lose 0.009 to rescoring them all.
	scannedPerRescore = 64
	// refinedPerRescore and minRefinedRescore: in an index with refinement codes, unless its
	// caller names a number, a search rescores one in refinedPerRescore of the candidates it
	// refines, at least minRefinedRescore. At 40M topic-fixture vectors and probe 64 (2,440
	// candidates) 128 rescored found 0.9820 of the exact top 10 and 192 0.9854, where all
	// 2,440 by their one-bit estimates found 0.9862; at 1M (320 candidates) 48 found 0.9706
	// and 64 0.9748 (all 320: 0.9754).
	refinedPerRescore = 12
	minRefinedRescore = 64
	// filteredSlack: a filtered search asks its filter of the best estimates in slices of
	// this many times the candidates it wants over the filter's share (so about this many
	// times as many pass as it wants in the first slice, when the filter is unrelated to the
	// query).
	filteredSlack = 1.25
	// prefetchAhead is how many candidates ahead of the one being rescored have their
	// records asked for.
	prefetchAhead = 8
)

// searchScratch is one search's working memory, pooled.
type searchScratch struct {
	q, pq, tmp []float32
	q16        []int16 // the query in words, for probing
	dots       []int32
	est        []float32 // a list's estimates
	mask       []uint16  // which of them are above the floor (estimates)
	qc         queryCode
	cands      []cand
	passed     []cand         // a filtered search's passing candidates
	sel        []int32        // a filtered search's slice of estimates to ask the filter of
	hist       [estBins]int32 // a filtered search's histogram of estimates
	recs       [][]byte       // the candidates' records, in the order they are rescored
	top        []scored
	scores     []cand // probing's heap of lists
	t          []int32
}

type cand struct {
	est float32
	pos uint32
	// For the refinement (refineCands): the segment and entry of the candidate's codes, its
	// one-bit code's sum sign(r_i) q_i and its list's centre with the query.
	seg, at   uint32
	signs, cq float32
}

func (r *Reader) getScratch() *searchScratch {
	s, _ := r.pool.Get().(*searchScratch)
	if s == nil {
		s = &searchScratch{q: make([]float32, r.dim), pq: make([]float32, r.dpad), tmp: make([]float32, r.dpad)}
	}
	return s
}

// Search returns the k live vectors nearest q that keep accepts (nil: all), best first. It
// probes o.Probe lists (more when keep passes few vectors), estimates the score of every vector
// in them from its code and rescores the o.Rescore best estimates with their int8 vectors.
func (r *Reader) Search(q []float32, k int, o SearchOptions, keep func(key uint32) bool) ([]Result, error) {
	if r.closed {
		return nil, errClosed
	}
	if len(q) != r.dim {
		return nil, fmt.Errorf("ivf: query of dimension %d, index %d", len(q), r.dim)
	}
	if k <= 0 || r.live == 0 {
		return nil, nil
	}
	if r.cent == nil {
		return r.Exact(q, k, keep)
	}
	probe := o.Probe
	if probe <= 0 {
		probe = r.h.Options.Probe
	}
	// cands is how many of the best one-bit estimates the search takes on: it rescores them
	// with their int8 vectors or, in an index with refinement codes, estimates them again from
	// those and rescores the best rescore of them. Unless the caller names the number rescored
	// in an index without refinement codes, cands grows with the vectors scanned.
	scale := o.Rescore <= 0 || r.refines
	cands := r.h.Options.Rescore
	if o.Rescore > 0 {
		cands = o.Rescore
		if r.refines {
			cands = max(cands, r.h.Options.Rescore)
		}
	}
	cands = max(cands, k)
	lists := r.h.Options.Lists
	share := 1.0 // of the vectors scanned that keep passes
	if keep != nil {
		// A filter that passes a share s of the vectors leaves s of each list, and the query's
		// nearest passing vectors lie farther out than its nearest vectors: probing about
		// probe/sqrt(s) lists finds enough of them when probe is large, and at least
		// minPassing*cands passing vectors' worth of lists when it is small (at a million
		// vectors, 4,096 lists and a filter keeping 1%, probe 16 found 0.78 of the unfiltered
		// recall with 160 lists, 0.9 needs about 500). When that would be most of the index,
		// or too few vectors pass to fill the candidates, every passing vector is scored
		// instead.
		s := r.selectivity(keep)
		share = s
		if s == 0 || float64(r.live)*s < float64(minPassing*cands) {
			return r.Exact(q, k, keep)
		}
		perList := float64(r.live) / float64(lists)
		probe = int(math.Ceil(max(float64(probe)/math.Sqrt(s), minPassing*float64(cands)/(s*perList))))
		if probe*2 >= lists {
			return r.Exact(q, k, keep)
		}
	}
	probe = min(probe, lists)
	s := r.getScratch()
	defer r.pool.Put(s)
	normalize(s.q, q)
	probed := r.probeLists(s, probe)
	if scale {
		cands = max(cands, int(float64(r.listLen(probed))*share)/scannedPerRescore)
	}
	rescore := cands
	if r.refines {
		rescore = o.Rescore
		if rescore <= 0 {
			rescore = min(cands, max(minRefinedRescore, cands/refinedPerRescore))
		}
		rescore = max(rescore, k)
	}
	if r.askRecords && r.refines {
		r.askRefinements(probed)
	}
	r.rot.apply(s.pq, s.q)
	s.qc.prepare(s.pq, r.words)
	anyDead := r.live < r.h.Len()
	if keep == nil {
		r.scanLists(s, probed, cands, anyDead, nil)
	} else {
		r.scanFiltered(s, probed, cands, anyDead, share, keep)
		// The probe was sized for minPassing*cands passing vectors at the sampled share. Fewer
		// than cands in the probed lists means the share was guessed high, most often because
		// no sampled position passed (a filter keeping a few dozen passages of millions): the
		// nearest passing vectors may lie in lists not probed, so every one is scored instead.
		if len(s.cands) < cands {
			return r.Exact(q, k, keep)
		}
	}
	if r.refines && len(s.cands) > rescore {
		r.refineCands(s, rescore)
	}
	// Every candidate is rescored, in the order gathered. Sorted by the upper bound of its
	// estimate, the rescoring could stop once the k-th exact score beat every bound left, but
	// it stopped early in almost no query (320 of 320 candidates rescored on average at 10M,
	// 316.5 at 1M), and the sort cost a twentieth of a query at 10M, probe 48.
	// The candidates' records lie scattered over the vector chunks, each a cache miss or
	// several: asking for the next few ahead keeps that many misses in flight.
	// Each record is found once, for its prefetch and its score.
	// When most records are on the disk (askRecords), each a page read, they are asked for
	// together: the 40M index's default search in a 4 GB memory cgroup answered 16 new
	// queries a second, against 9 faulting them one at a time.
	s.recs = s.recs[:0]
	for _, c := range s.cands {
		rec := r.record(c.pos)
		if r.askRecords {
			adviseWillNeed(rec)
		}
		s.recs = append(s.recs, rec)
	}
	for _, rec := range s.recs[:min(prefetchAhead, len(s.recs))] {
		prefetchBytes(rec)
	}
	s.top = s.top[:0]
	for i, c := range s.cands {
		if j := i + prefetchAhead; j < len(s.recs) {
			prefetchBytes(s.recs[j])
		}
		inv, code := splitRecord(s.recs[i])
		s.top = r.pushResult(s.top, scored{pos: c.pos, score: dotI8(s.q, code) * inv}, k)
	}
	clear(s.recs) // the pooled scratch keeps no views of the mappings
	return r.sortedResults(s.top), nil
}

// askRefinements asks the kernel for the refinement records of the probed lists, where the
// index's files are larger than memory: the candidates' records are a few among each list's
// (about 40 of a list's 2,440 at 40M, probe 64), and faulted one at a time they were most of
// a query's wait in a 4 GB memory cgroup. Asked for at once, a list's records are one read
// from the disk, in flight while the lists are scanned.
func (r *Reader) askRefinements(probed []int32) {
	rw := refineWords(r.words)
	for _, l := range probed {
		for _, seg := range r.segs {
			lo, hi := int(seg.offsets[l]), int(seg.offsets[l+1])
			adviseWillNeed(bytesOf(seg.refine[lo*rw : hi*rw]))
		}
	}
}

// refineCands estimates the candidates' scores again from their refinement codes and keeps
// the want best. The codes lie scattered over the segments (a cache miss each at 40M
// vectors, 40 bytes at 256 dimensions): asking for those ahead keeps misses in flight.
func (r *Reader) refineCands(s *searchScratch, want int) {
	rw := refineWords(r.words)
	ask := func(c *cand) {
		prefetchBytes(bytesOf(r.segs[c.seg].refine[int(c.at)*rw : int(c.at+1)*rw]))
	}
	for i := range min(prefetchAhead, len(s.cands)) {
		ask(&s.cands[i])
	}
	for i := range s.cands {
		if j := i + prefetchAhead; j < len(s.cands) {
			ask(&s.cands[j])
		}
		c := &s.cands[i]
		c.est = s.qc.refined(c.signs, r.segs[c.seg].refine[int(c.at)*rw:int(c.at+1)*rw], c.cq)
	}
	keepBest(s.cands, want)
	s.cands = s.cands[:want]
}

// scanLists estimates the score of every vector in the probed lists and leaves in s.cands the
// want best estimates of those that pass (want 0: all of them; dead ones read only when
// anyDead; pass nil: every live one).
func (r *Reader) scanLists(s *searchScratch, probed []int32, want int, anyDead bool, pass func(p uint32) bool) {
	// The candidates are gathered in a buffer of twice want, cut (cutCands) whenever it fills:
	// a fifth less time a query than a heap at 10M vectors, where thousands of estimates a
	// query beat the worst one kept so far.
	s.cands = s.cands[:0]
	floor := float32(math.Inf(-1)) // the worst estimate kept at the last cut
	k := estConsts{shift: s.qc.shift, dl: s.qc.dl}
	bb := blockBytes(r.words)
	for i, l := range probed {
		if i+1 < len(probed) {
			r.prefetchListHead(probed[i+1])
		}
		k.cq = dot(s.pq, r.cent.centers[int(l)*r.dpad:int(l+1)*r.dpad]) // ⟨c, q⟩
		for si, seg := range r.segs {
			lo, hi := int(seg.offsets[l]), int(seg.offsets[l+1])
			if hi == lo {
				continue
			}
			blocks, n := seg.listBlocks(l)
			nb := blocksOf(n)
			if cap(s.t) < nb*blockSize {
				c := nb*blockSize + nb*blockSize/2
				s.t, s.est, s.mask = make([]int32, c), make([]float32, c), make([]uint16, c/16+1)
			}
			factors := seg.factors[lo*factorsPer : hi*factorsPer]
			for c := 0; c < nb; c += scanChunk {
				if a := c + scanAhead; a < nb {
					e := min(nb, a+scanChunk)
					prefetchBytes(blocks[a*bb : e*bb])
					prefetchFloats(factors[a*blockSize*factorsPer : min(n, e*blockSize)*factorsPer])
				}
				e := min(nb, c+scanChunk)
				scanBlocks(blocks[c*bb:e*bb], e-c, r.words, &s.qc, s.t[c*blockSize:e*blockSize])
			}
			k.floor = floor
			est, mask := s.est[:n], s.mask[:(n+15)/16]
			estimates(s.t[:n], factors, &k, est, mask)
			pos := seg.pos[lo:hi]
			for w, m := range mask {
				for ; m != 0; m &= m - 1 {
					e := w*16 + bits.TrailingZeros16(m)
					x := est[e]
					if x <= floor { // the floor rose at a cut in this list
						continue
					}
					// The deleted-position bitmap is read only when something was deleted: at
					// 10M vectors each read is a cache miss, two thirds of the scan's own time.
					p := pos[e]
					if (anyDead && r.isDead(p)) || (pass != nil && !pass(p)) {
						continue
					}
					s.cands = append(s.cands, cand{est: x, pos: p, seg: uint32(si), at: uint32(lo + e), signs: s.qc.signs(s.t[e]), cq: k.cq})
					if len(s.cands) == 2*want {
						s.cands, floor = cutCands(s.cands, want)
					}
				}
			}
		}
	}
	if want > 0 && len(s.cands) > want {
		keepBest(s.cands, want)
		s.cands = s.cands[:want]
	}
}

// A list's codes and factors are read once, in order, and at 40M vectors (1.9 GB of them) from
// memory: a 4 KB page at a time, since the processor's own prefetching stops at a page's end.
// So the scan asks for them ahead of itself: the next list's first scanAhead blocks while it
// scans a list, and, every scanChunk blocks, the chunk scanAhead blocks on.
const (
	scanChunk = 4 // blocks: 4 KB of 256-bit codes
	scanAhead = 8 // blocks
)

// prefetchListHead asks for the centre, the first scanAhead blocks of codes and their factors
// of list l.
func (r *Reader) prefetchListHead(l int32) {
	prefetchFloats(r.cent.centers[int(l)*r.dpad : int(l+1)*r.dpad])
	bb := blockBytes(r.words)
	for _, seg := range r.segs {
		blocks, n := seg.listBlocks(l)
		m := min(n, scanAhead*blockSize)
		if m == 0 {
			continue
		}
		prefetchBytes(blocks[:blocksOf(m)*bb])
		lo := int(seg.offsets[l])
		prefetchFloats(seg.factors[lo*factorsPer : (lo+m)*factorsPer])
	}
}

// scanFiltered leaves in s.cands the want best estimates of the probed lists' vectors that
// keep passes, where keep passes about a share of them. Asking keep of every vector scanned
// cost most of a filtered query: a key read is a cache miss at 10M vectors, and a Kairos
// filter decodes the passage's metadata. So every live vector's estimate is gathered first,
// with a histogram of them, and keep is asked of the best estimates only, from the top of the
// histogram down, a slice of about filteredSlack*want/share of them at a time (about
// filteredSlack*want pass in a slice when the filter is unrelated to the query), until want
// have passed or every vector was asked. The best want that passed are then the want best of
// all that pass: every vector not asked has a lower estimate than every one asked.
func (r *Reader) scanFiltered(s *searchScratch, probed []int32, want int, anyDead bool, share float64, keep func(key uint32) bool) {
	r.scanLists(s, probed, 0, anyDead, nil)
	all := s.cands
	hist := &s.hist
	clear(hist[:])
	for _, c := range all {
		hist[estBin(c.est)]++
	}
	step := int(math.Ceil(filteredSlack * float64(want) / share))
	passed := s.passed[:0]
	for top := len(hist); top > 0 && len(passed) < want; {
		// The bins [lo, top) hold the next slice of estimates.
		lo, n := top, 0
		for lo > 0 && n < step {
			lo--
			n += int(hist[lo])
		}
		// The bins' edges as estimates: comparing floats costs a third of finding bins.
		from, below := binFloor(lo), binFloor(top)
		sel := s.sel[:0]
		for i, c := range all {
			if c.est >= from && c.est < below {
				sel = append(sel, int32(i))
			}
		}
		// Their keys lie scattered: asking for those ahead keeps misses in flight.
		for _, i := range sel[:min(prefetchAhead, len(sel))] {
			r.prefetchKey(all[i].pos)
		}
		for j, i := range sel {
			if j+prefetchAhead < len(sel) {
				r.prefetchKey(all[sel[j+prefetchAhead]].pos)
			}
			if keep(r.key(all[i].pos)) {
				passed = append(passed, all[i])
			}
		}
		s.sel = sel
		top = lo
	}
	if len(passed) > want {
		keepBest(passed, want)
		passed = passed[:want]
	}
	// s.cands takes the passing candidates; the gathered estimates' buffer becomes the next
	// search's passed buffer.
	s.cands, s.passed = passed, all[:0]
}

// estBins is the histogram of a filtered search's estimates: bins of 1/1024 over [-2, 2),
// estimates outside in the end bins. The estimates of unit vectors' inner products lie in
// [-1, 1] up to their error, and near the top, where the slices are cut, a 10M index's
// thousands of best estimates of a query spread over tens of bins.
const estBins = 4096

func estBin(est float32) int {
	b := int((est + 2) * (estBins / 4))
	return min(max(b, 0), estBins-1)
}

// binFloor is the lowest estimate of bin b (of the end bins, and past them: every estimate
// beyond).
func binFloor(b int) float32 {
	switch {
	case b <= 0:
		return float32(math.Inf(-1))
	case b >= estBins:
		return float32(math.Inf(1))
	}
	return float32(b)/(estBins/4) - 2
}

// listLen is how many entries the lists hold over every segment (dead ones included).
func (r *Reader) listLen(lists []int32) int {
	n := 0
	for _, l := range lists {
		for _, seg := range r.segs {
			n += int(seg.offsets[l+1] - seg.offsets[l])
		}
	}
	return n
}

// probeLists returns the probe lists whose centroids are nearest the unit query s.q.
func (r *Reader) probeLists(s *searchScratch, probe int) []int32 {
	lists := r.h.Options.Lists
	if lists <= r.bruteProbeBelow || probe*4 >= lists {
		// Every centroid's byte copy against the query in words, in one pass of the assembly
		// (at 8,192 lists of 256 dimensions, a float query and a call a list took 0.25 ms a
		// query with the selection, this 0.16 ms).
		if len(s.q16) < r.dim {
			s.q16 = make([]int16, r.dim)
		}
		if cap(s.dots) < lists {
			s.dots = make([]int32, lists)
		}
		quantize16(s.q16[:r.dim], s.q)
		dots := s.dots[:lists]
		dotsI16(s.q16[:r.dim], r.cent.dirs8, dots)
		// The probe best lists, in the candidates' heap: est is the list's score, pos the list.
		s.scores = s.scores[:0]
		for l, d := range dots {
			sc := float32(d) * r.cent.inv8[l]
			if len(s.scores) == probe && sc <= s.scores[0].est {
				continue
			}
			s.scores = pushCand(s.scores, cand{est: sc, pos: uint32(l)}, probe)
		}
		// Nearest first: the candidates' floor then rises at the first lists, and the scan
		// of the others keeps fewer estimates (cuts of the candidates' buffer were a seventh
		// of a query's time at 10M, probe 48, with the lists in the heap's order).
		slices.SortFunc(s.scores, func(a, b cand) int { return cmp.Compare(b.est, a.est) })
		out := make([]int32, len(s.scores))
		for i, c := range s.scores {
			out[i] = int32(c.pos)
		}
		return out
	}
	res, err := r.graph.Search(s.q, probe, max(graphBeam*probe, 64))
	if err != nil {
		return nil
	}
	out := make([]int32, len(res))
	for i, h := range res {
		out[i] = int32(h.Key)
	}
	return out
}

// selectivity estimates the share of live vectors keep accepts from a sample of positions
// (at least 1/(2*sampled) when none of the sample passes but some vector might), a sample
// that grows while few of it pass (selectivitySample). The sample is
// every position of a small index and pseudo-random positions of a large one: an even stride
// would meet a filter that repeats with the keys (every hundredth passage, one source's
// documents in turn) in step, and see it pass all or nothing.
func (r *Reader) selectivity(keep func(uint32) bool) float64 {
	n := r.h.Len()
	tried, passed := 0, 0
	try := func(p uint32) {
		if r.isDead(p) {
			return
		}
		tried++
		if keep(r.key(p)) {
			passed++
		}
	}
	if n <= selectivitySample {
		for p := range n {
			try(uint32(p))
		}
	} else {
		for i, end := uint64(0), uint64(selectivitySample); ; end *= 2 {
			for ; i < end; i++ {
				try(uint32(splitmix(i) % uint64(n)))
			}
			if passed >= selectivityPassing || passed*selectivitySample > tried || end >= selectivityMaxSample || end >= uint64(n) {
				break
			}
		}
	}
	if tried == 0 {
		return 0
	}
	if passed == 0 {
		return 1 / float64(2*tried)
	}
	return float64(passed) / float64(tried)
}

// splitmix is SplitMix64's output function: a fixed, well-mixed permutation of the integers.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Exact returns the k live vectors nearest q that keep accepts, by scoring every one: the
// reference the searches are measured against.
func (r *Reader) Exact(q []float32, k int, keep func(key uint32) bool) ([]Result, error) {
	if r.closed {
		return nil, errClosed
	}
	if len(q) != r.dim {
		return nil, fmt.Errorf("ivf: query of dimension %d, index %d", len(q), r.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	qn := make([]float32, r.dim)
	normalize(qn, q)
	var top []scored
	for _, c := range r.chunks {
		for i := range c.count {
			p := uint32(c.first + i)
			if r.isDead(p) || (keep != nil && !keep(c.keys[i])) {
				continue
			}
			inv, code := c.rec(i)
			top = r.pushResult(top, scored{pos: p, score: dotI8(qn, code) * inv}, k)
		}
	}
	return r.sortedResults(top), nil
}

// scored is a rescored position and its score. Its key is read only for the results and to
// break ties: at 10M vectors each key read is a cache miss, a tenth of a query's time when
// every candidate's was read.
type scored struct {
	pos   uint32
	score float32
}

// worse orders results: a is worse than b when it scores lower, or equal with a larger key.
func (r *Reader) worse(a, b scored) bool {
	return a.score < b.score || (a.score == b.score && r.key(a.pos) > r.key(b.pos))
}

// pushResult keeps the k best results in h, a min-heap (worst at h[0]).
func (r *Reader) pushResult(h []scored, x scored, k int) []scored {
	if len(h) == k {
		if !r.worse(h[0], x) {
			return h
		}
		h[0] = x
		for i := 0; ; {
			l, m := 2*i+1, i
			if l < len(h) && r.worse(h[l], h[m]) {
				m = l
			}
			if l+1 < len(h) && r.worse(h[l+1], h[m]) {
				m = l + 1
			}
			if m == i {
				return h
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !r.worse(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// pushCand keeps the n candidates of highest estimate in h, a min-heap by estimate.
func pushCand(h []cand, x cand, n int) []cand {
	if len(h) == n {
		h[0] = x
		for i := 0; ; {
			l, m := 2*i+1, i
			if l < len(h) && h[l].est < h[m].est {
				m = l
			}
			if l+1 < len(h) && h[l+1].est < h[m].est {
				m = l + 1
			}
			if m == i {
				return h
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[i].est >= h[p].est {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// sortedResults returns the results in h with their keys, best first.
func (r *Reader) sortedResults(h []scored) []Result {
	out := make([]Result, len(h))
	for i, x := range h {
		out[i] = Result{Key: r.key(x.pos), Score: x.score}
	}
	slices.SortFunc(out, func(a, b Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

// cutSample is how many of a full candidates' buffer cutCands looks at to choose its floor.
const cutSample = 128

// cutCands keeps the candidates of c above a floor that at least n of them beat, and returns
// them and the floor. The floor is read from a sample, placed to keep about 1.25n (the exact
// n-th estimate, keepBest's quickselect, mispredicted its way to a tenth of a query's time
// at 10M, probe 48), and the rare floor that keeps fewer than n is replaced by the exact one.
func cutCands(c []cand, n int) ([]cand, float32) {
	var smp [cutSample]float32
	step := len(c) / cutSample
	if step == 0 || 5*n >= 4*len(c) {
		floor := keepBest(c, n)
		return c[:n], floor
	}
	for i := range smp {
		smp[i] = c[i*step].est
	}
	slices.Sort(smp[:])
	floor := smp[cutSample-1-cutSample*5*n/(4*len(c))]
	above := 0
	for _, x := range c {
		if x.est > floor {
			above++
		}
	}
	if above < n {
		floor = keepBest(c, n)
		return c[:n], floor
	}
	j := 0
	for _, x := range c {
		c[j] = x
		if x.est > floor {
			j++
		}
	}
	return c[:j], floor
}

// keepBest moves the n candidates of highest estimate to the front of c (quickselect, in no
// particular order; ties at the n-th go either way) and returns the lowest estimate among them.
func keepBest(c []cand, n int) float32 {
	lo, hi := 0, len(c)-1
	for lo < hi {
		p := c[lo+(hi-lo)/2].est
		i, j := lo, hi
		for i <= j {
			for c[i].est > p {
				i++
			}
			for c[j].est < p {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case n-1 <= j:
			hi = j
		case n-1 >= i:
			lo = i
		default:
			lo = hi
		}
	}
	m := c[0].est
	for _, x := range c[1:n] {
		m = min(m, x.est)
	}
	return m
}
