package ivf

import (
	"cmp"
	"fmt"
	"math"
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
	// epsilon scales a code's error bound (RaBitQ's epsilon_0, in standard deviations of the
	// estimate's error): the rescoring stops once the k-th exact score beats every remaining
	// estimate plus epsilon times its bound. RaBitQ's 1.9 left 1.6% of the estimates of 3,000
	// 256-d vectors outside it (TestEstimateBound); 3 leaves about 0.1%, and each one outside
	// matters only when it is a true neighbour ranked just below the k-th.
	epsilon = 3
	// bruteProbeBelow: with this many lists or fewer, the lists to probe are found by comparing
	// the query with every centroid rather than through the graph: at 4,096 lists, 50
	// microseconds against 145 for the graph's search (ef 144, a million vectors, one core).
	bruteProbeBelow = 8192
	// selectivitySample is how many positions a filtered search tries its filter on to
	// estimate the share of vectors that pass.
	selectivitySample = 256
	// minPassing: a filtered search probes lists holding at least this many times the
	// candidates it rescores of vectors that pass, so that the rescoring chooses among passing
	// vectors near the query rather than among all the few it met.
	minPassing = 4
)

// searchScratch is one search's working memory, pooled.
type searchScratch struct {
	q, pq, tmp []float32
	qc         queryCode
	cands      []cand
	top        []Result
	scores     []probeScore
	t          []int32
}

type cand struct {
	est, ub float32
	pos     uint32
}

type probeScore struct {
	l int32
	s float32
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
	probe, rescore := o.Probe, o.Rescore
	if probe <= 0 {
		probe = r.h.Options.Probe
	}
	if rescore <= 0 {
		rescore = r.h.Options.Rescore
	}
	rescore = max(rescore, k)
	lists := r.h.Options.Lists
	if keep != nil {
		// A filter that passes a share s of the vectors leaves s of each list, and the query's
		// nearest passing vectors lie farther out than its nearest vectors: probing about
		// probe/sqrt(s) lists finds enough of them when probe is large, and at least
		// minPassing*rescore passing vectors' worth of lists when it is small (at a million
		// vectors, 4,096 lists and a filter keeping 1%, probe 16 found 0.78 of the unfiltered
		// recall with 160 lists, 0.9 needs about 500). When that would be most of the index,
		// or too few vectors pass to fill the candidates, every passing vector is scored
		// instead.
		s := r.selectivity(keep)
		if s == 0 || float64(r.live)*s < float64(minPassing*rescore) {
			return r.Exact(q, k, keep)
		}
		perList := float64(r.live) / float64(lists)
		probe = int(math.Ceil(max(float64(probe)/math.Sqrt(s), minPassing*float64(rescore)/(s*perList))))
		if probe*2 >= lists {
			return r.Exact(q, k, keep)
		}
	}
	probe = min(probe, lists)
	s := r.getScratch()
	defer r.pool.Put(s)
	normalize(s.q, q)
	probed := r.probeLists(s, probe)
	r.rot.apply(s.pq, s.q)
	s.qc.prepare(s.pq, r.words)
	qbound := epsilon * s.qc.errorScale()
	s.cands = s.cands[:0]
	for _, l := range probed {
		// ⟨c, q⟩ and |q - c|, the scale of the error bounds (|q| = 1).
		cq := dot(s.pq, r.cent.centers[int(l)*r.dpad:int(l+1)*r.dpad])
		bound := epsilon * float32(math.Sqrt(max(0, float64(1-2*cq+r.cent.norm2[l]))))
		for _, seg := range r.segs {
			lo, hi := int(seg.offsets[l]), int(seg.offsets[l+1])
			if hi == lo {
				continue
			}
			if cap(s.t) < hi-lo {
				s.t = make([]int32, hi-lo+hi-lo/2)
			}
			t := s.t[:hi-lo]
			popcounts(seg.codes[lo*r.words:hi*r.words], hi-lo, r.words, s.qc.planes, t)
			factors := seg.factors[lo*factorsPer : hi*factorsPer]
			for e, te := range t {
				f := factors[e*factorsPer : e*factorsPer+factorsPer]
				est := cq + f[1] + f[0]*s.qc.signs(te)
				if len(s.cands) == rescore && est <= s.cands[0].est {
					continue
				}
				p := seg.pos[lo+e]
				if r.isDead(p) || (keep != nil && !keep(r.key(p))) {
					continue
				}
				s.cands = pushCand(s.cands, cand{est: est, ub: est + f[2]*bound + f[0]*qbound, pos: p}, rescore)
			}
		}
	}
	// Rescore in order of upper bound; once the k-th exact score beats every remaining upper
	// bound, no remaining candidate can enter the results.
	slices.SortFunc(s.cands, func(a, b cand) int { return cmp.Compare(b.ub, a.ub) })
	s.top = s.top[:0]
	for _, c := range s.cands {
		if len(s.top) == k && c.ub < s.top[0].Score {
			break
		}
		s.top = pushResult(s.top, Result{Key: r.key(c.pos), Score: r.exactScore(s.q, c.pos)}, k)
	}
	return sortedResults(s.top), nil
}

// probeLists returns the probe lists whose centroids are nearest the unit query s.q.
func (r *Reader) probeLists(s *searchScratch, probe int) []int32 {
	lists := r.h.Options.Lists
	if lists <= bruteProbeBelow || probe*4 >= lists {
		s.scores = s.scores[:0]
		for l := range lists {
			s.scores = append(s.scores, probeScore{int32(l), dotI8(s.q, r.cent.dirs8[l*r.dim:(l+1)*r.dim]) * r.cent.inv8[l]})
		}
		if probe < lists {
			selectTop(s.scores, probe)
		}
		out := make([]int32, probe)
		for i := range out {
			out[i] = s.scores[i].l
		}
		return out
	}
	res, err := r.graph.Search(s.q, probe, max(probe+probe/2, 64))
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
// (at least 1/(2*sampled) when none of the sample passes but some vector might). The sample is
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
		for i := range uint64(selectivitySample) {
			try(uint32(splitmix(i) % uint64(n)))
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
	var top []Result
	for _, c := range r.chunks {
		for i := range c.count {
			p := uint32(c.first + i)
			if r.isDead(p) || (keep != nil && !keep(c.keys[i])) {
				continue
			}
			inv, code := c.rec(i)
			top = pushResult(top, Result{Key: c.keys[i], Score: dotI8(qn, code) * inv}, k)
		}
	}
	return sortedResults(top), nil
}

// worse orders results: a is worse than b when it scores lower, or equal with a larger key.
func worse(a, b Result) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.Key > b.Key)
}

// pushResult keeps the k best results in h, a min-heap (worst at h[0]).
func pushResult(h []Result, x Result, k int) []Result {
	if len(h) == k {
		if !worse(h[0], x) {
			return h
		}
		h[0] = x
		for i := 0; ; {
			l, m := 2*i+1, i
			if l < len(h) && worse(h[l], h[m]) {
				m = l
			}
			if l+1 < len(h) && worse(h[l+1], h[m]) {
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
		if !worse(h[i], h[p]) {
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

// sortedResults returns a copy of h ordered best first.
func sortedResults(h []Result) []Result {
	out := slices.Clone(h)
	slices.SortFunc(out, func(a, b Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

// selectTop moves the k highest scores of a to its front, in no particular order (quickselect).
func selectTop(a []probeScore, k int) {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[(lo+hi)/2].s
		i, j := lo, hi
		for i <= j {
			for a[i].s > p {
				i++
			}
			for a[j].s < p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}
