package search

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
)

func TestIsQuestionPassage(t *testing.T) {
	q := "Can I catch COVID-19 from my pet?"
	for _, tc := range []struct {
		name string
		p    corpus.Passage
		want bool
	}{
		{"question passage", corpus.Passage{Title: q, Text: q + " | " + q, Ordinal: 1}, true},
		{"answer passage", corpus.Passage{Title: q, Text: q + " | No evidence so far.", Ordinal: 0}, false},
		{"first passage repeating its title", corpus.Passage{Title: q, Text: q + " | " + q, Ordinal: 0}, false},
		{"named section", corpus.Passage{Title: q, Section: "Pets", Text: q + " > Pets | " + q, Ordinal: 2}, false},
		{"untitled", corpus.Passage{Text: "x | x", Ordinal: 1}, false},
		{"body longer than the title", corpus.Passage{Title: "Paris", Text: "Paris | Paris is a city.", Ordinal: 3}, false},
	} {
		if got := isQuestionPassage(tc.p); got != tc.want {
			t.Errorf("%s: isQuestionPassage = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFAQHitsCarryAnswer: whichever passage of an FAQ entry matches, the hit shows the entry's
// question and answer, and its question and answer take one place among the hits.
func TestFAQHitsCarryAnswer(t *testing.T) {
	ix := openIndex(t, faq, Options{})
	for _, tc := range []struct {
		query, title, answer string
	}{
		{"how long does the virus survive on surfaces", "How long does the virus survive on surfaces?", "It is not certain how long"},
		{"Can I catch COVID-19 from my pet?", "", ""},
		{"What is a novel coronavirus?", "", ""},
	} {
		for _, perDoc := range []int{0, 1} {
			hits, err := ix.Search(context.Background(), Request{Text: tc.query, K: 10, PerDoc: perDoc})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 10 {
				t.Fatalf("%q: %d hits, want 10", tc.query, len(hits))
			}
			docs, ids := map[string]bool{}, map[string]bool{}
			for i, h := range hits {
				if isQuestionPassage(h.Passage) {
					t.Errorf("%q: hit %d is a question without its answer: %q", tc.query, i+1, h.Text)
				}
				// Without a cap, two pieces of one long answer may both rank; never one twice.
				if ids[h.ID] || (perDoc == 1 && docs[h.DocID]) {
					t.Errorf("%q per_doc %d: %s (entry %s) appears twice", tc.query, perDoc, h.ID, h.DocID)
				}
				docs[h.DocID], ids[h.ID] = true, true
				if h.Rank != i+1 || (i > 0 && h.Score > hits[i-1].Score) {
					t.Errorf("%q: hit %d: rank %d, score %v after %v", tc.query, i+1, h.Rank, h.Score, hits[max(i-1, 0)].Score)
				}
			}
			top := hits[0]
			if tc.title != "" && (top.Title != tc.title || !strings.HasPrefix(top.Text, tc.title+" | "+tc.answer)) {
				t.Errorf("%q: top hit %s %q, want the entry %q with its answer %q", tc.query, top.ID, top.Text, tc.title, tc.answer)
			}
		}
	}
}

func TestMinScore(t *testing.T) {
	ix := openIndex(t, faq, Options{})
	const query = "how long does the virus survive on surfaces"
	all, err := ix.Search(context.Background(), Request{Text: query, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	mid := (all[0].Score + all[len(all)-1].Score) / 2
	for _, tc := range []struct {
		name string
		min  *float64
	}{
		{"none", nil},
		{"below every hit", f(0)},
		{"between", f(mid)},
		{"above the best", f(all[0].Score + 1)},
	} {
		hits, err := ix.Search(context.Background(), Request{Text: query, K: 10, MinScore: tc.min})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, h := range all {
			if tc.min == nil || h.Score >= *tc.min {
				want++
			}
		}
		if len(hits) != want {
			t.Errorf("%s: %d hits, want %d", tc.name, len(hits), want)
		}
		if tc.name == "between" && (want == 0 || want == len(all)) {
			t.Errorf("between: the threshold %v cuts nothing: the test proves nothing", mid)
		}
	}
}
