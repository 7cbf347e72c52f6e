package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/search"
)

var testNow = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// hit builds a retrieved passage whose years are extracted from its text, as the indexer does.
func hit(id string, score float64, text string) search.Hit {
	return search.Hit{Passage: corpus.Passage{ID: id, Text: text, Years: timex.Extract(text)}, Score: score}
}

func ids(hits []Hit) string {
	var b []string
	for _, h := range hits {
		b = append(b, h.ID)
	}
	return strings.Join(b, " ")
}

// opts fixes the options tests depend on, so retuning the defaults does not break them.
func opts() Options {
	o := Options{Weight: 0.7, Normalize: NormMinMax, DecayYears: 2, StartWeight: 1, EndWeight: 0.5, FocusWeight: 0.5,
		NoYearScore: 0.2, RecentHalfLifeYears: 3}
	o.Now = testNow
	return o
}

func TestParseStages(t *testing.T) {
	good := map[string]string{"": "none", "none": "none", "time": "time", "cross": "cross",
		"cross,time": "cross,time", "Cross, Time": "cross,time", "wikichat": "wikichat"}
	for in, want := range good {
		st, err := ParseStages(in)
		if err != nil || FormatStages(st) != want {
			t.Errorf("ParseStages(%q) = %v, %v; want %s", in, st, err, want)
		}
	}
	bad := map[string]string{
		"time,cross":    `rerank "time,cross": the cross-encoder must run first (write cross,time): a time signal applied before it is erased`,
		"bm25":          `unknown rerank "bm25" (want none, time, cross, cross,time or wikichat)`,
		"wikichat,time": `unknown rerank "wikichat,time" (want none, time, cross, cross,time or wikichat)`,
	}
	for in, want := range bad {
		if _, err := ParseStages(in); err == nil || err.Error() != want {
			t.Errorf("ParseStages(%q) error %v, want %q", in, err, want)
		}
	}
}

func TestTimeRerankYear(t *testing.T) {
	// Same-entity paragraphs that differ by their years, as in TimeQA.
	shits := []search.Hit{
		hit("other-years", 10, "Paul Sturrock | He played for Dundee United from 1965 to 1970 and later managed Plymouth in 2000 ."),
		hit("no-year", 9.5, "Paul Sturrock | He is a Scottish football manager and former player ."),
		hit("near", 9.0, "Paul Sturrock | In 1978 he was capped for Scotland ."),
		hit("inside", 8.0, "Paul Sturrock | From 1974 to 1977 he played for St Johnstone ."),
	}
	hits := newCandidates(shits)
	TimeRerank(hits, timex.Spec{Kind: timex.KindRange, From: 1974, To: 1977}, opts(), true)
	if got := ids(hits); !strings.HasPrefix(got, "inside ") {
		t.Fatalf("order %s: the passage naming the range should lead", got)
	}
	pos := map[string]int{}
	for i, h := range hits {
		pos[h.ID] = i
		if h.Explain.TimeScore == nil || len(h.Explain.Notes) == 0 {
			t.Errorf("%s: no time explanation", h.ID)
		}
	}
	if len(hits) != 4 {
		t.Fatalf("dropped candidates: %s", ids(hits))
	}
	ts := func(id string) float64 { return *hits[pos[id]].Explain.TimeScore }
	if !(ts("inside") > ts("near") && ts("near") > ts("no-year")) {
		t.Errorf("time scores inside %.3f near %.3f no-year %.3f: want decreasing", ts("inside"), ts("near"), ts("no-year"))
	}
	if ts("other-years") >= ts("inside") {
		t.Errorf("a passage about other years (%.3f) should score below one in range (%.3f)", ts("other-years"), ts("inside"))
	}
	if n := hits[0].Explain.Notes[0]; n != "mentions 1974..1977, within 1974..1977; names both 1974 and 1977; 1 of 1 mentions close" {
		t.Errorf("note %q", n)
	}
	if n := hits[pos["no-year"]].Explain.Notes[0]; n != "mentions no year" {
		t.Errorf("note %q", n)
	}
}

func TestTimeRerankNoneKeepsOrder(t *testing.T) {
	hits := newCandidates([]search.Hit{hit("a", 3, "in 1990"), hit("b", 2, "in 2020"), hit("c", 1, "")})
	TimeRerank(hits, timex.Spec{}, opts(), true)
	if ids(hits) != "a b c" {
		t.Errorf("none spec reordered: %s", ids(hits))
	}
}

func TestTimeRerankRecent(t *testing.T) {
	old := hit("old", 5, "The club won the league in 1998 .")
	dated := hit("dated", 4, "The club plays in the second tier .")
	dated.Date = testNow.AddDate(0, -2, 0)
	newer := hit("newer", 3, "As of 2025 , the club plays in the first tier .")
	hits := newCandidates([]search.Hit{old, dated, newer})
	TimeRerank(hits, timex.Spec{Kind: timex.KindRecent}, opts(), true)
	if got := ids(hits); got != "dated newer old" && got != "newer dated old" {
		t.Errorf("recent order %s: the 1998 passage should fall last", got)
	}
	for _, h := range hits {
		if h.ID == "dated" && !strings.Contains(h.Explain.Notes[0], "newest date 2026") {
			t.Errorf("note %q", h.Explain.Notes[0])
		}
	}
}

func TestWikiChatSort(t *testing.T) {
	mk := func() []Hit {
		return newCandidates([]search.Hit{
			hit("a", 5, "no years here"),
			hit("b", 4, "in 1995 and 1996"),
			hit("c", 3, "from 1990 to 1998"),
			hit("d", 2, "in 2010"),
			hit("e", 1, "in 1995"),
		})
	}
	hits := mk()
	WikiChatSort(hits, timex.Spec{Kind: timex.KindRange, From: 1995, To: 1995}, true)
	// Stable: b, c, e contain 1995 (key 1) in retrieval order, then a, d (key 0).
	if got := ids(hits); got != "b c e a d" {
		t.Errorf("year sort %s, want b c e a d", got)
	}
	hits = mk()
	WikiChatSort(hits, timex.Spec{Kind: timex.KindRecent}, false)
	if got := ids(hits); got != "d c b e a" {
		t.Errorf("recent sort %s, want d c b e a", got)
	}
}

// fakeScorer scores a passage by the number in it, optionally sleeping per call.
type fakeScorer struct {
	delay time.Duration
	calls int
	err   error
}

func (f *fakeScorer) Score(ctx context.Context, query string, passages []string) ([]float32, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	time.Sleep(f.delay)
	out := make([]float32, len(passages))
	for i, p := range passages {
		var v float32
		fmt.Sscanf(strings.TrimPrefix(p, "s"), "%g", &v)
		out[i] = v
	}
	return out, nil
}

var _ PairScorer = (*fakeScorer)(nil)

func TestCrossRerank(t *testing.T) {
	shits := []search.Hit{hit("a", 4, "s1"), hit("b", 3, "s9"), hit("c", 2, "s5"), hit("d", 1, "s7"), hit("e", 0, "s8")}
	hits := newCandidates(shits)
	if err := CrossRerank(context.Background(), &fakeScorer{}, "q", hits, CrossOptions{BatchSize: 2}, true); err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); got != "b e d c a" {
		t.Errorf("cross order %s", got)
	}

	// A budget spent after the first batch: the rest keeps retrieval order, after the scored.
	hits = newCandidates(shits)
	fs := &fakeScorer{delay: 30 * time.Millisecond}
	if err := CrossRerank(context.Background(), fs, "q", hits, CrossOptions{BatchSize: 2, Budget: 10 * time.Millisecond}, true); err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); got != "b a c d e" || fs.calls != 1 {
		t.Errorf("budgeted order %s after %d calls, want b a c d e after 1", got, fs.calls)
	}
	if !hits[2].Explain.Unscored || !strings.Contains(hits[2].Explain.Notes[0], "budget 10ms spent after 2 of 5") {
		t.Errorf("unscored explanation %+v", hits[2].Explain)
	}
	// Then time: reorders within the scored and within the unscored, never across.
	TimeRerank(hits, timex.Spec{Kind: timex.KindRange, From: 2000, To: 2000}, opts(), false)
	for i, h := range hits {
		if h.Explain.Unscored != (i >= 2) {
			t.Errorf("time stage mixed scored and unscored: %s", ids(hits))
		}
	}

	err := CrossRerank(context.Background(), &fakeScorer{err: errors.New("boom")}, "q", newCandidates(shits), CrossOptions{BatchSize: 2}, false)
	if err == nil || err.Error() != "cross-encoder on candidates 1-2: boom" {
		t.Errorf("error %v", err)
	}
}

// fakeSearcher returns fixed hits, recording the request.
type fakeSearcher struct {
	hits []search.Hit
	req  search.Request
}

func (f *fakeSearcher) Search(ctx context.Context, req search.Request) ([]search.Hit, error) {
	f.req = req
	n := min(req.K, len(f.hits))
	return append([]search.Hit(nil), f.hits[:n]...), nil
}

func TestRetriever(t *testing.T) {
	var shits []search.Hit
	for i := range 60 {
		shits = append(shits, hit(fmt.Sprintf("p%d", i), float64(100-i), fmt.Sprintf("Club | In %d the club moved .", 1950+i)))
	}
	fs := &fakeSearcher{hits: shits}
	e, err := NewRetriever(fs, RetrieverOptions{Time: opts()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(context.Background(), Query{
		Request: search.Request{Text: "Where did the club play from 1995 to 1996?", K: 2},
		Time:    timex.Spec{Kind: timex.KindAuto}, Rerank: []Stage{StageTime}, Explain: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if fs.req.K != DefaultCandidates {
		t.Errorf("retrieved %d candidates, want %d", fs.req.K, DefaultCandidates)
	}
	if res.Time != (timex.Spec{Kind: timex.KindRange, From: 1995, To: 1996}) {
		t.Errorf("resolved time %+v", res.Time)
	}
	if got := ids(res.Hits); got != "p45 p46" {
		t.Errorf("top 2 %s, want p45 p46", got)
	}
	for i, h := range res.Hits {
		if h.Rank != i+1 || h.Explain == nil || h.Score != h.Explain.Final {
			t.Errorf("hit %d: rank %d, explain %v, score %v", i, h.Rank, h.Explain, h.Score)
		}
	}
	b, err := json.Marshal(res.Hits[0].Explain)
	if err != nil || !strings.Contains(string(b), `"time":`) || !strings.Contains(string(b), `"notes":["mentions 1995, within 1995..1996`) {
		t.Errorf("explanation JSON %s, %v", b, err)
	}

	// No rerank: K hits in retrieval order, no explanation asked, no explanation given.
	res, err = e.Search(context.Background(), Query{Request: search.Request{Text: "club", K: 2}})
	if err != nil || fs.req.K != 2 || ids(res.Hits) != "p0 p1" || res.Hits[0].Explain != nil || res.Hits[1].Rank != 2 {
		t.Errorf("plain search: %v %d %s", err, fs.req.K, ids(res.Hits))
	}
	// Cross without a scorer, and a bad stage list, are errors.
	if _, err := e.Search(context.Background(), Query{Rerank: []Stage{StageCross}}); err == nil {
		t.Error("cross without a scorer: no error")
	}
	if _, err := e.Search(context.Background(), Query{Rerank: []Stage{StageTime, StageCross}}); err == nil {
		t.Error("time,cross: no error")
	}
	if _, err := NewRetriever(fs, RetrieverOptions{Time: Options{Weight: 2}}); err == nil {
		t.Error("invalid options accepted")
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mut := range []func(*Options){
		func(o *Options) { o.Weight = -0.1 },
		func(o *Options) { o.Normalize = "zscore" },
		func(o *Options) { o.DecayYears = 0 },
		func(o *Options) { o.NoYearScore = 2 },
		func(o *Options) { o.RecentHalfLifeYears = -1 },
		func(o *Options) { o.FocusWeight = -1 },
	} {
		o := DefaultOptions()
		mut(&o)
		if o.Validate() == nil {
			t.Errorf("invalid %+v accepted", o)
		}
	}
	if (CrossOptions{BatchSize: 0}).Validate() == nil || (CrossOptions{BatchSize: 1, Budget: -1}).Validate() == nil {
		t.Error("invalid cross options accepted")
	}
}

// BenchmarkTimeRerank50 measures the time rerank of 50 candidates (the default), candidate
// wrapping included; it reports the median as p50-ns since the target is a p50.
func BenchmarkTimeRerank50(b *testing.B) {
	base := make([]search.Hit, 50)
	for i := range base {
		base[i] = hit(fmt.Sprint(i), float64(50-i), fmt.Sprintf("Club | From %d to %d the club played in the league ; in %d it moved , and by %d it had 1,500 members .", 1950+i, 1952+i, 1960+i, 1990+i%20))
	}
	spec := timex.Spec{Kind: timex.KindRange, From: 1975, To: 1977}
	o := opts()
	var d []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		hits := newCandidates(base)
		TimeRerank(hits, spec, o, false)
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
}

func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"", "none", "time", "cross", "cross,time", "wikichat", "time,cross", "cross, time"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStages(s)
		if err != nil {
			return
		}
		again, err := ParseStages(FormatStages(st))
		if err != nil || FormatStages(again) != FormatStages(st) {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", s, st, FormatStages(st), again, err)
		}
	})
}

func TestStagesWithoutExplain(t *testing.T) {
	var hits []Hit
	for _, h := range []search.Hit{hit("a", 2, "in 1950"), hit("b", 1, "in 1990")} {
		hits = append(hits, Hit{Hit: h})
	}
	TimeRerank(hits, timex.Spec{Kind: timex.KindRange, From: 1990, To: 1990}, opts(), false)
	if ids(hits) != "b a" || hits[0].Explain == nil {
		t.Errorf("order %s", ids(hits))
	}
	for i := range hits {
		hits[i].Explain = nil
	}
	WikiChatSort(hits, timex.Spec{Kind: timex.KindRange, From: 1950, To: 1950}, false)
	if ids(hits) != "a b" {
		t.Errorf("order %s", ids(hits))
	}
}
