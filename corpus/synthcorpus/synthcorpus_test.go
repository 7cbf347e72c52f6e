package synthcorpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// sciFactModel learns a Model from the SciFact abstracts, cut into passages of at most 120
// words the simple way (the real splitter lives in corpus, above this package).
func sciFactModel(t testing.TB) *Model {
	t.Helper()
	path := sharedtest.Join("data/beir-scifact/corpus.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("SciFact corpus (set KAIROS_SHARED): %v", err)
	}
	defer f.Close()
	var l Learner
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var rec struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: line %d: %v", path, n, err)
		}
		title, words := strings.Fields(rec.Title), strings.Fields(rec.Text)
		budget := 120 - len(title) - 1
		var bodies [][]string
		var totals []int
		for len(words) > 0 && budget > 0 {
			k := min(budget, len(words))
			bodies = append(bodies, words[:k])
			totals = append(totals, len(title)+1+k)
			words = words[k:]
		}
		l.AddDocument(title, bodies, totals)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	m, err := l.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func generate(t testing.TB, m *Model, opts Options) ([]byte, Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Generate(context.Background(), &buf, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), st
}

func TestModelFromSciFact(t *testing.T) {
	m := sciFactModel(t)
	if m.Words[0] != "the" && m.Words[0] != "of" {
		t.Errorf("most frequent SciFact word is %q, want the or of", m.Words[0])
	}
	// Natural text: Zipf exponents near 1, and a few percent of tokens are hapaxes.
	if m.ZipfS < 0.7 || m.ZipfS > 1.6 {
		t.Errorf("Zipf exponent %.3f, want within [0.7, 1.6]", m.ZipfS)
	}
	if m.TailMass < 0.005 || m.TailMass > 0.2 {
		t.Errorf("tail mass %.4f, want within [0.005, 0.2]", m.TailMass)
	}
	for i := 1; i < len(m.Counts); i++ {
		if m.Counts[i] > m.Counts[i-1] {
			t.Fatalf("counts not sorted at rank %d", i)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	m := sciFactModel(t)
	tests := []struct {
		name       string
		a, b       Options
		wantEquals bool
	}{
		{"same seed", Options{Passages: 500, Seed: 7}, Options{Passages: 500, Seed: 7}, true},
		{"seed zero twice", Options{Passages: 200}, Options{Passages: 200}, true},
		{"other seed", Options{Passages: 500, Seed: 7}, Options{Passages: 500, Seed: 8}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := generate(t, m, tc.a)
			b, _ := generate(t, m, tc.b)
			if got := bytes.Equal(a, b); got != tc.wantEquals {
				t.Errorf("outputs equal: %v, want %v", got, tc.wantEquals)
			}
		})
	}
	// A prefix of a longer run is the shorter run: N does not change the first passages.
	short, _ := generate(t, m, Options{Passages: 100, Seed: 3})
	long, _ := generate(t, m, Options{Passages: 300, Seed: 3})
	if !bytes.HasPrefix(long, short) {
		t.Error("the first 100 passages of a 300-passage run differ from a 100-passage run")
	}
}

func TestGenerateLengthBounds(t *testing.T) {
	m := sciFactModel(t)
	for _, maxWords := range []int{120, 40, 16} {
		out, st := generate(t, m, Options{Passages: 2000, Seed: 1, MaxWords: maxWords})
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		if len(lines) != 2000 || st.Passages != 2000 {
			t.Fatalf("MaxWords %d: %d lines, stats %d passages, want 2000", maxWords, len(lines), st.Passages)
		}
		ids := map[string]bool{}
		var words int64
		for i, line := range lines {
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			n := len(strings.Fields(r.Text))
			if r.Title != "" {
				n += len(strings.Fields(r.Title)) + 1
				if tw := len(strings.Fields(r.Title)); tw >= maxWords/2 {
					t.Errorf("line %d: title of %d words would be shortened by the splitter", i+1, tw)
				}
			}
			if n < 1 || n > maxWords || r.Text == "" {
				t.Errorf("MaxWords %d: line %d has %d words", maxWords, i+1, n)
			}
			if ids[r.ID] {
				t.Errorf("line %d: duplicate id %q", i+1, r.ID)
			}
			ids[r.ID] = true
			words += int64(n)
		}
		if words != st.Words {
			t.Errorf("MaxWords %d: counted %d words, stats say %d", maxWords, words, st.Words)
		}
	}
}

func TestGenerateDistribution(t *testing.T) {
	m := sciFactModel(t)
	out, st := generate(t, m, Options{Passages: 5000, Seed: 11})
	counts := map[string]int{}
	var body int
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		for _, w := range strings.Fields(r.Text) {
			counts[w]++
			body++
		}
	}
	var total int64
	for _, c := range m.Counts {
		total += c
	}
	// The head words keep their real share, within 10% (they are drawn thousands of times).
	for rank := range 5 {
		want := (1 - m.TailMass) * float64(m.Counts[rank]) / float64(total)
		got := float64(counts[m.Words[rank]]) / float64(body)
		if math.Abs(got-want) > 0.1*want {
			t.Errorf("rank %d %q: share %.4f, want %.4f", rank+1, m.Words[rank], got, want)
		}
	}
	// Tail words come at the Good-Turing rate, and most are new spellings.
	share := float64(st.TailWords) / float64(st.Words)
	if math.Abs(share-m.TailMass) > 0.25*m.TailMass {
		t.Errorf("tail share %.4f, want about %.4f", share, m.TailMass)
	}
	// The mean passage length follows the learned one within 5%.
	var n, s float64
	for l, c := range m.PassageWords {
		n += float64(c)
		s += float64(l) * float64(c)
	}
	if mean := float64(st.Words) / float64(st.Passages); math.Abs(mean-s/n) > 0.05*s/n {
		t.Errorf("mean passage length %.1f words, learned %.1f", mean, s/n)
	}
}

func TestTailWordsDistinct(t *testing.T) {
	seen := map[string]int{}
	for _, r := range []int{1, 2, 84, 85, 86, 7224, 7225, 1 << 20, tailRanks} {
		w := tailWord(r)
		if o, ok := seen[w]; ok {
			t.Errorf("ranks %d and %d both spell %q", o, r, w)
		}
		seen[w] = r
		if len(w) < 4 || strings.Trim(w, consonants+vowels) != "" {
			t.Errorf("rank %d spells %q", r, w)
		}
	}
}

func TestValidate(t *testing.T) {
	m := sciFactModel(t)
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"defaults", Options{Passages: 1}, true},
		{"no passages", Options{}, false},
		{"tiny budget", Options{Passages: 1, MaxWords: 3}, false},
		{"negative progress", Options{Passages: 1, ProgressEvery: -1}, false},
	}
	for _, tc := range tests {
		_, err := Generate(context.Background(), &bytes.Buffer{}, m, tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	var l Learner
	l.AddDocument([]string{"T"}, [][]string{{"a", "b"}}, []int{4})
	if _, err := l.Model(); err == nil {
		t.Error("a model from 2 words was accepted")
	}
}

// TestGenerateWeighsCJKWords: a vocabulary with Han words (SQuAD's English passages name
// people in Chinese) gives passages the splitter keeps whole, each one record one passage,
// though such a word weighs more than one (corpus.WordWeight). Counted by strings.Fields, a
// 1M-passage corpus had come out 75 passages longer from the indexer, and bench scale stopped.
func TestGenerateWeighsCJKWords(t *testing.T) {
	m := hanModel(t, 2)
	out, _ := generate(t, m, Options{Passages: 300, Seed: 1})
	sp, err := corpus.NewSplitter(corpus.SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	heavy := 0
	for i, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if len(strings.Fields(r.Text)) > 60 {
			heavy++
		}
		doc := corpus.Document{ID: r.ID, Title: r.Title, Sections: []corpus.Section{{Text: r.Text}}}
		if ps := sp.Split(doc); len(ps) != 1 {
			t.Fatalf("record %d (%d words) split into %d passages", i+1, len(strings.Fields(r.Text)), len(ps))
		}
	}
	if heavy == 0 {
		t.Fatal("no long passage drawn: the test checks nothing")
	}
}

// hanModel learns a model from 40 documents of 110 words where every every-th word is a Han
// word weighing 2 to 4 (the rest ASCII); every 1 gives a model of Han words only.
func hanModel(t *testing.T, every int) *Model {
	t.Helper()
	han := []string{"劉黑馬", "蕭札刺之子重喜", "石抹孛迭兒", "塔不已兒", "北京大学", "東京タワー"}
	var l Learner
	for d := range 40 {
		var body []string
		for i := range 110 {
			if i%every == 0 {
				body = append(body, han[(d+i)%len(han)])
			} else if i%17 == 5 {
				body = append(body, "a|b") // markup the MediaWiki writer must escape
			} else {
				body = append(body, "word"+strconv.Itoa(i%17))
			}
		}
		title := []string{han[d%len(han)], "Title"}
		if every == 1 {
			title = title[:1]
		}
		l.AddDocument(title, [][]string{body}, []int{len(body) + len(title) + 1})
	}
	m, err := l.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
