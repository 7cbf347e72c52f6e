package qdrant

import (
	"hash/fnv"
	"math"
	"strconv"
)

// termHash is the sparse index a term gets when no other term took it first.
func termHash(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// assignIDs gives every term of the vocabulary (sorted, so every build of it agrees) a
// distinct sparse index: its hash, or on a collision the hash of "term\x00n" for the first
// free n. It reports how many terms were moved.
func assignIDs(sorted []string) (map[string]uint32, int) {
	ids := make(map[string]uint32, len(sorted))
	taken := make(map[uint32]bool, len(sorted))
	moved := 0
	for _, t := range sorted {
		id := termHash(t)
		for n := 1; taken[id]; n++ {
			id = termHash(t + "\x00" + strconv.Itoa(n))
			if n == 1 {
				moved++
			}
		}
		taken[id] = true
		ids[t] = id
	}
	return ids, moved
}

// bleve 2.5.7 scores a term of a BM25 disjunction (search/scorer/scorer_term.go) as
//
//	idf * sqrt(tf)*k1 / (sqrt(tf) + k1*(1 - b + b*fieldLength/avg)) * queryWeight
//
// with idf = ln(1 + (N - df + 0.5)/(df + 0.5)), fieldLength = 1/norm² where norm is what zap
// stores, float32(1/sqrt(tokens)), avg = ceil(total tokens / N), queryWeight = idf * queryNorm
// and queryNorm = 1/sqrt(Σ idf² over the query's terms); the disjunction sums the matching
// terms in query order and multiplies by coord = matched/terms. The functions below replicate
// it step for step, so scores agree to the last bits.

// avgLen is bleve's average field length.
func avgLen(tokens int64, docs int) float64 {
	if docs == 0 {
		return 0
	}
	return math.Ceil(float64(tokens) / float64(docs))
}

// fieldLength is the length bleve recovers from the stored norm.
func fieldLength(tokens int) float64 {
	norm := float64(float32(1.0 / math.Sqrt(float64(tokens))))
	return 1 / (norm * norm)
}

// docWeight is the document side of a term's score (bleve's score without idf and query
// weight).
func docWeight(tf int, length int, k1, b, avg float64) float64 {
	s := math.Sqrt(float64(tf))
	return (s * k1) / (s + k1*(1-b+(b*fieldLength(length)/avg)))
}

// idf is bleve's BM25 idf.
func idf(docs, df int) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// queryPlan is the query side of one BM25 search.
type queryPlan struct {
	terms  []string
	idf    []float64
	weight []float64 // idf * queryNorm, bleve's queryWeight
}

func newQueryPlan(terms []string, docs int, df func(string) int) queryPlan {
	p := queryPlan{terms: terms, idf: make([]float64, len(terms)), weight: make([]float64, len(terms))}
	var sumSq float64
	for i, t := range terms {
		p.idf[i] = idf(docs, df(t))
		sumSq += p.idf[i] * p.idf[i]
	}
	norm := 1.0 / math.Sqrt(sumSq)
	for i := range terms {
		p.weight[i] = p.idf[i] * norm
	}
	return p
}

// score is bleve's score of a passage of length tokens whose frequency of the query's i-th
// term is tf(i) (0: absent).
func (p queryPlan) score(tf func(i int) int, length int, k1, b, avg float64) float64 {
	var sum float64
	matched := 0
	for i := range p.terms {
		f := tf(i)
		if f == 0 {
			continue
		}
		matched++
		tf := math.Sqrt(float64(f))
		s := p.idf[i] * (tf * k1) / (tf + k1*(1-b+(b*fieldLength(length)/avg)))
		if p.weight[i] != 1.0 {
			s *= p.weight[i]
		}
		sum += s
	}
	return sum * (float64(matched) / float64(len(p.terms)))
}
