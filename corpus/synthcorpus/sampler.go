package synthcorpus

import (
	"math"
	"math/rand/v2"
	"strings"
)

// alias draws indexes with probability proportional to their weights in O(1) (Vose's alias
// method), so that drawing a hundred million words costs no more per word than drawing ten.
type alias struct {
	prob  []float64
	alias []int32
}

func newAlias(weights []int64) *alias {
	n := len(weights)
	a := &alias{prob: make([]float64, n), alias: make([]int32, n)}
	total := float64(sum(weights))
	scaled := make([]float64, n)
	var small, large []int32
	for i, w := range weights {
		scaled[i] = float64(w) * float64(n) / total
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s], a.alias[s] = scaled[s], l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left is 1 up to rounding.
	for _, i := range append(small, large...) {
		a.prob[i], a.alias[i] = 1, i
	}
	return a
}

func (a *alias) draw(r *rand.Rand) int {
	i := r.IntN(len(a.prob))
	if r.Float64() < a.prob[i] {
		return i
	}
	return int(a.alias[i])
}

// tailRanks bounds the synthetic tail: 2^26 words, far more distinct words than any
// benchmark corpus here can show, so the bound does not shape the statistics.
const tailRanks = 1 << 26

// zipfTail draws ranks 1..tailRanks with probability proportional to rank^-s, by inverting
// the continuous power law's distribution function.
type zipfTail struct {
	s, top float64 // top = (tailRanks+1)^(1-s) - 1, or log(tailRanks+1) when s == 1
}

func newZipfTail(s float64) zipfTail {
	if math.Abs(s-1) < 1e-9 {
		return zipfTail{s: 1, top: math.Log(tailRanks + 1)}
	}
	return zipfTail{s: s, top: math.Pow(tailRanks+1, 1-s) - 1}
}

func (z zipfTail) draw(r *rand.Rand) int {
	u := r.Float64()
	var x float64
	if z.s == 1 {
		x = math.Exp(u * z.top)
	} else {
		x = math.Pow(1+u*z.top, 1/(1-z.s))
	}
	return min(max(int(x), 1), tailRanks)
}

// Syllables spell tail words: a rank's base-85 digits as consonant-vowel pairs, so that tail
// words look like words to an analyzer (letters only) and each rank has its own spelling.
const (
	consonants = "bcdfghjklmnprstvz"
	vowels     = "aeiou"
)

// tailWord spells the tail word of rank r (1-based), at least two syllables long.
func tailWord(r int) string {
	var b strings.Builder
	base := len(consonants) * len(vowels)
	for i := 0; r > 0 || i < 2; i++ {
		d := r % base
		r /= base
		b.WriteByte(consonants[d/len(vowels)])
		b.WriteByte(vowels[d%len(vowels)])
	}
	return b.String()
}
