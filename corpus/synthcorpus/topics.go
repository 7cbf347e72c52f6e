package synthcorpus

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Topics give a generated corpus the structure that makes dense retrieval of real text
// possible: passages about the same things share words. Without topics every word of every
// passage is drawn from one unigram distribution, so a sentence encoder's vectors of two
// passages differ by noise alone and all of them crowd around one mean; nearest neighbours then
// barely stand out, whatever the encoder (kairos bench ann on the random-weight static fixture
// finds recall@10 under 0.6 for every engine, hnswlib and FAISS included). With Options.Topics
// = n, every real word past the TopicBackgroundWords most frequent belongs to one of n topics
// (TopicOf), each document draws a main and a second topic, and TopicShare of its words come
// from them; the rest, and the synthetic tail, are drawn as without topics. A static model
// whose rows carry the same topics (cmd/scalebench's WriteTopicModel) then embeds the corpus
// into clusters, as trained models embed real text.
const (
	// TopicBackgroundWords is how many of the most frequent real words belong to no topic:
	// function words and words common to every subject ("the", "of", "study").
	TopicBackgroundWords = 300
	// TopicShare is the share of a document's words drawn from its topics.
	TopicShare = 0.5
	// MainTopicShare is the share of those drawn from the main topic; the rest come from the
	// second.
	MainTopicShare = 0.7
)

// TopicOf returns the topic, in [0, n), of the real word of frequency rank rank (0-based, the
// order of Model.Words), or -1 when it belongs to none: a background word, or n < 1. The topic
// is a hash of the word, so that a model built from the same Model finds the same topics.
func TopicOf(word string, rank, n int) int {
	if n < 1 || rank < TopicBackgroundWords {
		return -1
	}
	h := fnv.New64a()
	h.Write([]byte(word))
	return int(h.Sum64() % uint64(n))
}

// topicSampler draws a word of a given topic with probability proportional to the square root
// of its count: proportional to the count itself, a topic's most frequent word (a word of rank
// a few hundred) would be a tenth of its every passage.
type topicSampler struct {
	words [][]int32 // per topic: its words' indexes in Model.Words
	draw  []*alias  // per topic, over words[t]; nil for a topic without words
}

func newTopicSampler(m *Model, n int) *topicSampler {
	s := &topicSampler{words: make([][]int32, n), draw: make([]*alias, n)}
	for i, w := range m.Words {
		if t := TopicOf(w, i, n); t >= 0 {
			s.words[t] = append(s.words[t], int32(i))
		}
	}
	for t, ws := range s.words {
		if len(ws) == 0 {
			continue
		}
		counts := make([]int64, len(ws))
		for j, i := range ws {
			counts[j] = int64(64*math.Sqrt(float64(m.Counts[i]))) + 1
		}
		s.draw[t] = newAlias(counts)
	}
	return s
}

// word draws a word of topic t; ok is false when the topic has no words (more topics than
// content words), and the caller draws from the whole vocabulary instead.
func (s *topicSampler) word(r *rand.Rand, t int) (index int, ok bool) {
	if s.draw[t] == nil {
		return 0, false
	}
	return int(s.words[t][s.draw[t].draw(r)]), true
}
