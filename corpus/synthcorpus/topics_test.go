package synthcorpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// topicConcentration generates passages and returns, over their words that have a topic, the
// share that fall in each document's two most frequent topics.
func topicConcentration(t *testing.T, m *Model, topics, n int) float64 {
	t.Helper()
	out, _ := generate(t, m, Options{Passages: n, Seed: 7, Topics: topics})
	rank := make(map[string]int, len(m.Words))
	for i, w := range m.Words {
		rank[w] = i
	}
	perDoc := map[string]map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		doc, _, _ := strings.Cut(rec.ID, "-")
		if perDoc[doc] == nil {
			perDoc[doc] = map[int]int{}
		}
		for _, w := range strings.Fields(rec.Text) {
			if r, ok := rank[w]; ok {
				if tp := TopicOf(w, r, 200); tp >= 0 {
					perDoc[doc][tp]++
				}
			}
		}
	}
	var inTop2, all int
	for _, counts := range perDoc {
		var cs []int
		for _, c := range counts {
			cs = append(cs, c)
			all += c
		}
		sort.Sort(sort.Reverse(sort.IntSlice(cs)))
		for _, c := range cs[:min(2, len(cs))] {
			inTop2 += c
		}
	}
	return float64(inTop2) / float64(all)
}

// TestTopicsConcentrateDocuments: with topics, most of a document's topical words are of its two
// topics; without them, words are spread over every topic (the measure is TopicOf over 200
// topics both times). Not all of them: the draws outside TopicShare come from the whole
// vocabulary, topical words of other topics included (0.66 here).
func TestTopicsConcentrateDocuments(t *testing.T) {
	m := sciFactModel(t)
	with := topicConcentration(t, m, 200, 3000)
	without := topicConcentration(t, m, 0, 3000)
	t.Logf("share of topical words in each document's two main topics: %.3f with 200 topics, %.3f without", with, without)
	if with < 0.6 {
		t.Errorf("with topics, %.3f of a document's topical words are in its two main topics, want at least 0.6", with)
	}
	if without > 0.2 {
		t.Errorf("without topics, %.3f of a document's topical words are in its two main topics, want under 0.2", without)
	}
}

func TestTopicOf(t *testing.T) {
	for _, tc := range []struct {
		word        string
		rank, n     int
		wantNoTopic bool
	}{
		{"the", 0, 100, true},
		{"kinase", TopicBackgroundWords - 1, 100, true},
		{"kinase", TopicBackgroundWords, 100, false},
		{"kinase", 5000, 0, true},
	} {
		got := TopicOf(tc.word, tc.rank, tc.n)
		if (got < 0) != tc.wantNoTopic || got >= max(tc.n, 1) {
			t.Errorf("TopicOf(%q, %d, %d) = %d", tc.word, tc.rank, tc.n, got)
		}
	}
	if a, b := TopicOf("kinase", 5000, 100), TopicOf("kinase", 9000, 100); a != b {
		t.Errorf("a word's topic depends on its rank: %d and %d", a, b)
	}
}

// TestTopicsDeterministicAndValidated: topics keep the output a function of model, seed and
// options, and a count out of range is refused.
func TestTopicsDeterministicAndValidated(t *testing.T) {
	m := sciFactModel(t)
	a, _ := generate(t, m, Options{Passages: 200, Seed: 3, Topics: 50})
	b, _ := generate(t, m, Options{Passages: 200, Seed: 3, Topics: 50})
	c, _ := generate(t, m, Options{Passages: 200, Seed: 3})
	if !bytes.Equal(a, b) {
		t.Error("the same options gave different passages")
	}
	if bytes.Equal(a, c) {
		t.Error("topics changed nothing")
	}
	for _, n := range []int{-1, maxTopics + 1} {
		if err := (Options{Passages: 1, Topics: n}).Validate(); err == nil || !strings.Contains(err.Error(), "topics") {
			t.Errorf("Topics %d: err = %v", n, err)
		}
	}
}
