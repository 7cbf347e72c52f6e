package postings

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Scoring holds BM25's parameters and the collection statistics a search scores with. The
// statistics are the whole collection's, across every segment and shard, so that a passage
// scores the same wherever it is stored.
type Scoring struct {
	K1, B float64 // term-frequency saturation and length normalisation (Kairos: 1.2, 0.4)
	// Docs is the number of live passages of the collection and Tokens their total length,
	// as indexer.BM25Stats records them. The average length is ceil(Tokens / Docs), rounded
	// up to a whole token as bleve rounds it.
	Docs   int64
	Tokens int64
}

// Validate reports parameters bleve would not score with.
func (sc Scoring) Validate() error {
	switch {
	case sc.K1 < 0 || math.IsNaN(sc.K1) || math.IsInf(sc.K1, 0):
		return fmt.Errorf("postings scoring: k1 %v must be finite and >= 0", sc.K1)
	case !(sc.B >= 0 && sc.B <= 1):
		return fmt.Errorf("postings scoring: b %v must be in [0, 1]", sc.B)
	case sc.Docs <= 0 || sc.Tokens <= 0:
		return errors.New("postings scoring: the collection statistics need at least one passage and one token")
	}
	return nil
}

func (sc Scoring) avgLength() float64 {
	// bleve: math.Ceil(float64(fieldCardinality) / float64(count)), count a uint64 of the
	// float64 DocCount.
	return math.Ceil(float64(int(sc.Tokens)) / float64(uint64(float64(sc.Docs))))
}

// termWeight is one query term's share of the score, as bleve's TermQueryScorer computes it.
type termWeight struct {
	term string
	df   uint64 // across the collection
	idf  float64
	qw   float64 // queryBoost (1) * idf * queryNorm
}

// plan is a query scored against collection statistics: the terms with their weights and the
// order in which bleve sums their contributions.
type plan struct {
	sc       Scoring
	avg      float64
	terms    []termWeight
	sumOrder []int // indexes into terms
}

// bySearcherCount is bleve's OrderedSearcherList: its slice disjunction sorts its term
// searchers by Count (the document frequency) with sort.Sort, and sums in that order. The
// same Less and Swap over the same initial order give the same permutation.
type bySearcherCount struct {
	idx []int
	df  []uint64
}

func (o bySearcherCount) Len() int           { return len(o.idx) }
func (o bySearcherCount) Less(i, j int) bool { return o.df[o.idx[i]] < o.df[o.idx[j]] }
func (o bySearcherCount) Swap(i, j int)      { o.idx[i], o.idx[j] = o.idx[j], o.idx[i] }

// heapTakeover is bleve's DisjunctionHeapTakeover: above this many terms bleve's heap
// disjunction sums in the order of its heap, which this package does not replay; it sums in
// query order instead, which differs from bleve by rounding (a few units in the last place).
const heapTakeover = 10

func newPlan(sc Scoring, terms []string, df []uint64) *plan {
	p := &plan{sc: sc, avg: sc.avgLength(), terms: make([]termWeight, len(terms))}
	docTotal := uint64(float64(sc.Docs))
	for i, t := range terms {
		p.terms[i] = termWeight{term: t, df: df[i],
			idf: math.Log(1 + (float64(docTotal)-float64(df[i])+0.5)/(float64(df[i])+0.5))}
	}
	p.sumOrder = make([]int, len(terms))
	for i := range p.sumOrder {
		p.sumOrder[i] = i
	}
	if len(terms) <= heapTakeover {
		sort.Sort(bySearcherCount{idx: p.sumOrder, df: df})
	}
	sumOfSquaredWeights := 0.0
	for _, i := range p.sumOrder {
		w := 1.0 * p.terms[i].idf
		sumOfSquaredWeights += w * w
	}
	queryNorm := 1.0 / math.Sqrt(sumOfSquaredWeights)
	for i := range p.terms {
		p.terms[i].qw = 1.0 * p.terms[i].idf * queryNorm
	}
	return p
}

// scorer computes contributions for one goroutine, caching the length norms of short
// passages and the contributions of a single occurrence in them.
type scorer struct {
	*plan
	norms [256]float64 // lengthNorm by length, 0 until computed
	// once[i*256+length] is term i's contribution in a passage of that length where it occurs
	// once (most postings), 0 until computed (or when k1 is 0 and every contribution is 0, and
	// always at lenEscape: onceRow),
	// allocated on first use: the sqrt and the division were a fifth of the CPU of the
	// slowest queries at 10M.
	once []float64
}

// lengthNorm is bleve's 1 - b + b*fieldLength/avg, where fieldLength comes back from the
// float32 norm 1/sqrt(length) that zap stores.
func (s *scorer) lengthNorm(length uint32) float64 {
	if length < uint32(len(s.norms)) {
		if v := s.norms[length]; v != 0 {
			return v
		}
	}
	norm := float64(float32(1.0 / math.Sqrt(float64(length))))
	fieldLength := 1 / (norm * norm)
	v := 1 - s.sc.B + (s.sc.B * fieldLength / s.avg)
	if length < uint32(len(s.norms)) {
		s.norms[length] = v
	}
	return v
}

// contribution is term i's score in a passage of the given length where it occurs freq
// times, as bleve's TermQueryScorer.Score computes it (tf is sqrt(freq)). It grows with freq
// and falls with length, in floating point too (every step is monotone), which the upper
// bounds of the pruning rely on.
func (s *scorer) contribution(i int, freq, length uint32) float64 {
	if freq != 1 || length >= lenEscape {
		return s.compute(i, freq, length)
	}
	row := s.onceRow(i)
	if v := row[length]; v != 0 {
		return v
	}
	v := s.compute(i, 1, length)
	row[length] = v
	return v
}

// onceRow is term i's row of once, by length: its entry lenEscape stays 0 (a length of 255
// or more is computed), so that a row indexed by Segment.lens8 needs no test of the escape.
func (s *scorer) onceRow(i int) *[256]float64 {
	if s.once == nil {
		s.once = make([]float64, len(s.terms)*256)
	}
	return (*[256]float64)(s.once[i*256:])
}

// compute is contribution without the cache.
func (s *scorer) compute(i int, freq, length uint32) float64 {
	w := &s.terms[i]
	tf := math.Sqrt(float64(freq))
	score := w.idf * (tf * s.sc.K1) / (tf + s.sc.K1*s.lengthNorm(length))
	if w.qw != 1.0 {
		score = score * w.qw
	}
	return score
}

// total is bleve's disjunction score: the sum of the matched terms' contributions, in
// bleve's order, times the share of the query's terms matched.
func (p *plan) total(contrib []float64, matched []bool, count int) float64 {
	var sum float64
	for _, i := range p.sumOrder {
		if matched[i] {
			sum += contrib[i]
		}
	}
	coord := float64(count) / float64(len(p.terms))
	return sum * coord
}
