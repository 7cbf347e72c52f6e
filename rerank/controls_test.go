package rerank

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/search"
)

// newsHits are passages about one topic dated 0.2 to 4 years before testNow, in a retrieval
// order that prefers the oldest, with a time-less one first.
func newsHits() []search.Hit {
	var hs []search.Hit
	for i, months := range []int{48, 24, 12, 6, 2} {
		h := hit(fmt.Sprintf("m%d", months), float64(10-i), "The council debated the budget .")
		h.Date = testNow.AddDate(0, -months, 0)
		hs = append(hs, h)
	}
	return hs
}

func recentQuery(halfLife float64, now time.Time) Query {
	return Query{Request: search.Request{Text: "What is the latest on the budget?", K: 5},
		Time: timex.Spec{Kind: timex.KindRecent}, Rerank: []Stage{StageTime}, Explain: true,
		RecentHalfLifeYears: halfLife, Now: now}
}

// The per-query half-life overrides the engine's: with the engine's 3 years a passage one
// year old still wins on relevance; with a news-like 0.25 the two-month-old one comes first;
// and the time score of the passage one year old is exactly 2^(-1/half-life).
func TestRecentHalfLifeOverride(t *testing.T) {
	o := opts()
	e, err := NewRetriever(&fakeSearcher{hits: newsHits()}, RetrieverOptions{Time: o})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		halfLife float64
		wantTop  string
	}{
		{0, "m12"}, // the engine's 3 years
		{3, "m12"},
		{1, "m2"},
		{0.25, "m2"},
	}
	for _, tc := range tests {
		res, err := e.Search(context.Background(), recentQuery(tc.halfLife, time.Time{}))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Hits[0].ID; got != tc.wantTop {
			t.Errorf("half-life %v: first hit %s, want %s (order %s)", tc.halfLife, got, tc.wantTop, ids(res.Hits))
		}
		hl := cmpOr(tc.halfLife, o.RecentHalfLifeYears)
		for _, h := range res.Hits {
			if h.ID != "m12" {
				continue
			}
			age := fractionalYear(testNow) - fractionalYear(h.Date)
			if want := math.Exp2(-age / hl); math.Abs(*h.Explain.TimeScore-want) > 1e-9 {
				t.Errorf("half-life %v: time score of the 1-year-old passage %v, want %v", tc.halfLife, *h.Explain.TimeScore, want)
			}
		}
	}
	if _, err := e.Search(context.Background(), recentQuery(-1, time.Time{})); err == nil {
		t.Error("negative half-life accepted")
	}
}

func cmpOr(a, b float64) float64 {
	if a != 0 {
		return a
	}
	return b
}

// A query's own now anchors both "recent" and relative years: asked as of four years ago,
// the passage dated then is the newest, and "last year" means the year before that.
func TestPerQueryNow(t *testing.T) {
	e, err := NewRetriever(&fakeSearcher{hits: newsHits()}, RetrieverOptions{Time: opts()})
	if err != nil {
		t.Fatal(err)
	}
	then := testNow.AddDate(-4, 0, 0)
	res, err := e.Search(context.Background(), recentQuery(0.25, then))
	if err != nil {
		t.Fatal(err)
	}
	if res.Hits[0].ID != "m48" {
		t.Errorf("as of %s the first hit is %s, want m48 (the passage dated then)", then.Format(time.DateOnly), res.Hits[0].ID)
	}
	q := Query{Request: search.Request{Text: "Who won the league last year?", K: 5}, Time: timex.Spec{Kind: timex.KindAuto}, Now: then}
	if res, err = e.Search(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if want := (timex.Spec{Kind: timex.KindRange, From: then.Year() - 1, To: then.Year() - 1}); res.Time != want {
		t.Errorf("last year as of %d resolved to %v, want %v", then.Year(), res.Time, want)
	}
	q.Now = time.Time{} // the engine's now
	if res, err = e.Search(context.Background(), q); err != nil || res.Time.From != testNow.Year()-1 {
		t.Errorf("engine now: %v %v", res.Time, err)
	}
}

// The wikichat stage sets scores that follow its order, so sorting the hits by score (as
// WikiChat's clients and softmax do) keeps it, for a year need and for recent.
func TestWikiChatScoresFollowOrder(t *testing.T) {
	shits := []search.Hit{
		hit("a", 50, "no years here"), hit("b", 40, "in 1995 and 1996"), hit("c", 30, "from 1990 to 1998"),
		hit("d", 20, "in 2010"), hit("e", 10, "in 1995"),
	}
	e, err := NewRetriever(&fakeSearcher{hits: shits}, RetrieverOptions{Time: opts()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text, want string
	}{
		{"What happened in 1995?", "b c e a d"},
		{"What is the latest news?", "d c b e a"},
		{"Who wrote it?", "a b c d e"}, // no time need: retrieval order and scores
	}
	for _, tc := range tests {
		res, err := e.Search(context.Background(), Query{Request: search.Request{Text: tc.text, K: 5}, Time: timex.Spec{Kind: timex.KindAuto}, Rerank: []Stage{StageWikiChat}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res.Hits); got != tc.want {
			t.Errorf("%s: order %s, want %s", tc.text, got, tc.want)
		}
		for i := 1; i < len(res.Hits); i++ {
			if !(res.Hits[i].Score < res.Hits[i-1].Score) {
				t.Errorf("%s: score of rank %d (%v) not below rank %d (%v)", tc.text, i+1, res.Hits[i].Score, i, res.Hits[i-1].Score)
			}
		}
	}
}
