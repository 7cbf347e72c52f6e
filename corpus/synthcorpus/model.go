package synthcorpus

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Model holds the statistics a corpus is generated from. Build one with a Learner.
type Model struct {
	// Words is the real vocabulary, most frequent first (ties by word), with Counts.
	Words  []string
	Counts []int64
	// TailMass is the share of words drawn from the synthetic Zipf tail beyond the real
	// vocabulary (the Good–Turing unseen mass: hapax tokens / all tokens).
	TailMass float64
	// ZipfS is the Zipf exponent fitted to the real rank-frequency curve; the tail's word of
	// rank r (counted after the real vocabulary) has probability proportional to r^-ZipfS.
	ZipfS float64
	// PassageWords[n] counts real passages of n words, title prefix included.
	PassageWords []int64
	// TitleWords[n] counts real titles of n words.
	TitleWords []int64
	// DocPassages[n] counts real documents of n passages.
	DocPassages []int64
}

// Learner accumulates real text statistics into a Model. The zero value is ready to use.
type Learner struct {
	counts       map[string]int64
	tokens       int64
	passageWords []int64
	titleWords   []int64
	docPassages  []int64
}

func bump(h *[]int64, n int) {
	for len(*h) <= n {
		*h = append(*h, 0)
	}
	(*h)[n]++
}

// AddDocument records one real document: its title words and, for each of its passages, the
// body words (without the title prefix) and the passage's total word count.
func (l *Learner) AddDocument(title []string, passages [][]string, totalWords []int) {
	if l.counts == nil {
		l.counts = make(map[string]int64)
	}
	if len(passages) == 0 {
		return
	}
	bump(&l.titleWords, len(title))
	bump(&l.docPassages, len(passages))
	for i, body := range passages {
		for _, w := range body {
			l.counts[w]++
			l.tokens++
		}
		bump(&l.passageWords, totalWords[i])
	}
}

// minTokens is the least text a Model is fitted on: below it the tail estimate means little.
const minTokens = 1000

// Model returns the learned statistics. It fails when too little text was added.
func (l *Learner) Model() (*Model, error) {
	if l.tokens < minTokens {
		return nil, fmt.Errorf("synthcorpus: learned from %d words, need at least %d", l.tokens, minTokens)
	}
	m := &Model{
		Words:        make([]string, 0, len(l.counts)),
		PassageWords: append([]int64(nil), l.passageWords...),
		TitleWords:   append([]int64(nil), l.titleWords...),
		DocPassages:  append([]int64(nil), l.docPassages...),
	}
	var hapax int64
	for w, c := range l.counts {
		m.Words = append(m.Words, w)
		if c == 1 {
			hapax++
		}
	}
	sort.Slice(m.Words, func(i, j int) bool {
		ci, cj := l.counts[m.Words[i]], l.counts[m.Words[j]]
		if ci != cj {
			return ci > cj
		}
		return m.Words[i] < m.Words[j]
	})
	m.Counts = make([]int64, len(m.Words))
	for i, w := range m.Words {
		m.Counts[i] = l.counts[w]
	}
	m.TailMass = float64(hapax) / float64(l.tokens)
	m.ZipfS = fitZipf(m.Counts)
	return m, m.Validate()
}

// fitZipf is the least-squares slope of log count against log rank over the ranks whose
// counts are at least 2 (hapaxes flatten the curve's end into a step).
func fitZipf(counts []int64) float64 {
	var n, sx, sy, sxx, sxy float64
	for i, c := range counts {
		if c < 2 {
			break
		}
		x, y := math.Log(float64(i+1)), math.Log(float64(c))
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	if n < 2 || n*sxx-sx*sx == 0 {
		return 1
	}
	return -(n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// Validate reports a Model that cannot generate passages.
func (m *Model) Validate() error {
	switch {
	case len(m.Words) == 0 || len(m.Words) != len(m.Counts):
		return errors.New("synthcorpus: model has no vocabulary")
	case m.TailMass < 0 || m.TailMass >= 1 || math.IsNaN(m.TailMass):
		return fmt.Errorf("synthcorpus: tail mass %v is not in [0,1)", m.TailMass)
	case !(m.ZipfS > 0):
		return fmt.Errorf("synthcorpus: Zipf exponent %v is not positive", m.ZipfS)
	case sum(m.PassageWords) == 0 || sum(m.TitleWords) == 0 || sum(m.DocPassages) == 0:
		return errors.New("synthcorpus: model has no passage, title or document lengths")
	}
	for i, c := range m.Counts {
		if c <= 0 {
			return fmt.Errorf("synthcorpus: word %q has count %d", m.Words[i], c)
		}
	}
	return nil
}

func sum(h []int64) int64 {
	var s int64
	for _, v := range h {
		s += v
	}
	return s
}
