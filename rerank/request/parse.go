package request

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Error is a Query that Parse refused. Field is the JSON name of the offending field
// ("k", "filters.date_to"), prefixed by its place in a batch ("queries[3].k") when the
// caller says so with In. The CLI prints it as one line; the server answers it with 400.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

// In returns e with its field placed under prefix ("queries[3].").
func (e *Error) In(prefix string) *Error { return &Error{Field: prefix + e.Field, Msg: e.Msg} }

func fail(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Limits bound what a Query may ask for. A zero field means no bound: the CLI runs
// unbounded, the server passes its Options.
type Limits struct {
	MaxChars      int // characters (Unicode code points) of Text
	MaxK          int // hits per query
	MaxCandidates int // passages the rerankers see
	// MaxTotalHits bounds the hits of one batch, the sum of its queries' k: the work and
	// the response of a request grow with it (100 queries at k 300 answer 30,000 passages,
	// about 32 MB of JSON). The server sets it; the CLI leaves it 0, since a batch file is
	// the user's own job.
	MaxTotalHits int
}

// TotalHits returns the weight of a batch, the sum of its queries' k, and an *Error naming
// max_total_hits when it is over l.MaxTotalHits. A query that reranks weighs its candidates
// where they are more than its k: the rerankers read that many passages, text and all, and
// 100 queries at k 10 with 1,000 candidates each held 100,000 passages on a budget of 1,000.
func (l Limits) TotalHits(qs []rerank.Query) (int, error) {
	total, reranked := 0, false
	for _, q := range qs {
		w := q.K
		if len(q.Rerank) > 0 && q.Candidates > w {
			w, reranked = q.Candidates, true
		}
		total += w
	}
	if l.MaxTotalHits > 0 && total > l.MaxTotalHits {
		what, fix := "the sum of their k", "a smaller k"
		if reranked {
			what, fix = "the sum of their k, or of their candidates where they rerank", "a smaller k or fewer candidates"
		}
		return total, fail("queries", "%d queries ask for %d hits in all (%s), over the limit of %d (max_total_hits): ask for fewer queries or %s",
			len(qs), total, what, l.MaxTotalHits, fix)
	}
	return total, nil
}

// Parse validates q against l and returns the engine's query, every default filled but
// Mode, which stays "" when q names none (the default depends on the index loaded when the
// query runs). Every error is an *Error.
func Parse(q Query, l Limits) (rerank.Query, error) {
	var out rerank.Query
	var err error
	if out.Text, err = l.Text("text", q.Text); err != nil {
		return out, err
	}
	if out.K, err = l.k(q.K); err != nil {
		return out, err
	}
	if out.Mode, err = search.ParseMode(q.Mode, ""); err != nil {
		return out, fail("mode", "%q: want bm25, dense or hybrid", q.Mode)
	}
	if out.Rerank, err = stages(q.Rerank); err != nil {
		return out, err
	}
	if out.Time, err = timeNeed(q.Time, out.Rerank); err != nil {
		return out, err
	}
	switch {
	case q.Candidates < 0:
		return out, fail("candidates", "%d is negative", q.Candidates)
	case l.MaxCandidates > 0 && q.Candidates > l.MaxCandidates:
		return out, fail("candidates", "%d is over the limit of %d (max_candidates)", q.Candidates, l.MaxCandidates)
	case q.PerDoc < 0:
		return out, fail("per_doc", "%d is negative", q.PerDoc)
	}
	if m := q.MinScore; m != nil {
		if math.IsNaN(*m) || math.IsInf(*m, 0) {
			return out, fail("min_score", "%v: want a finite number", *m)
		}
		out.MinScore = new(*m)
	}
	out.Candidates, out.Explain, out.Exact, out.PerDoc = q.Candidates, q.Explain, q.Exact, q.PerDoc
	if err := fusion(q, &out.Request); err != nil {
		return out, err
	}
	if out.Now, err = date("now", q.Now, false); err != nil {
		return out, err
	}
	if h := q.RecentHalfLifeYears; h != 0 {
		if err := rerank.CheckHalfLife(h); err != nil {
			return out, fail("recent_half_life_years", "%v", err)
		}
	}
	out.RecentHalfLifeYears = q.RecentHalfLifeYears
	if out.Filters, err = filters(q.Filters); err != nil {
		return out, err
	}
	return out, nil
}

// Text validates a query text in field: valid UTF-8, not blank, within MaxChars.
func (l Limits) Text(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fail(field, "not valid UTF-8")
	}
	if strings.TrimSpace(s) == "" {
		return "", fail(field, "empty query")
	}
	if n := utf8.RuneCountInString(s); l.MaxChars > 0 && n > l.MaxChars {
		return "", fail(field, "%d characters, over the limit of %d (max_query_chars)", n, l.MaxChars)
	}
	return s, nil
}

func (l Limits) k(k *int) (int, error) {
	switch {
	case k == nil:
		return DefaultK, nil
	case *k < 1:
		return 0, fail("k", "%d: want a positive number of hits", *k)
	case l.MaxK > 0 && *k > l.MaxK:
		return 0, fail("k", "%d is over the limit of %d (max_k)", *k, l.MaxK)
	}
	return *k, nil
}

// stages parses the rerank field. "" (or [""]) is no reranking, as "none" is: a stage left
// out only keeps the ranking as it is, so reading blank as none widens nothing.
func stages(l List) ([]rerank.Stage, error) {
	if blankRerank(l) {
		return nil, nil
	}
	for i, s := range l {
		if strings.TrimSpace(s) == "" {
			return nil, fail(fmt.Sprintf("rerank[%d]", i), "empty string")
		}
	}
	st, err := rerank.ParseStages(strings.Join(l, ","))
	if err != nil {
		return nil, fail("rerank", "%v", err)
	}
	return st, nil
}

// timeNeed parses s; empty means auto when a stage uses time, none otherwise.
func timeNeed(s string, st []rerank.Stage) (timex.Spec, error) {
	if strings.TrimSpace(s) == "" {
		for _, x := range st {
			if x == rerank.StageTime || x == rerank.StageWikiChat {
				return timex.Spec{Kind: timex.KindAuto}, nil
			}
		}
		return timex.Spec{Kind: timex.KindNone}, nil
	}
	sp, err := timex.Parse(s)
	if err != nil {
		return sp, fail("time", "%v", err)
	}
	return sp, nil
}

func fusion(q Query, r *search.Request) error {
	var fe *search.FusionError
	if err := search.CheckFusion(search.Fusion(q.Fusion), q.Alpha, q.RRFK); errors.As(err, &fe) {
		return fail(fe.Field, "%s", fe.Msg)
	} else if err != nil {
		return err
	}
	r.Fusion, r.Alpha, r.RRFK = search.Fusion(q.Fusion), q.Alpha, q.RRFK
	return nil
}

func filters(f Filters) (search.Filters, error) {
	var out search.Filters
	var b DateBounds
	var err error
	if b.From, err = date("filters.date_from", f.DateFrom, false); err != nil {
		return out, err
	}
	if b.To, err = date("filters.date_to", f.DateTo, true); err != nil {
		return out, err
	}
	b.HasFrom, b.HasTo = f.DateFrom != "", f.DateTo != ""
	if b.Crossed() {
		return out, fail("filters.date_to", "%s is before date_from %s", f.DateTo, f.DateFrom)
	}
	b.Apply(&out)
	for i, s := range f.Source {
		if strings.TrimSpace(s) == "" {
			return out, fail(fmt.Sprintf("filters.source[%d]", i), "empty string")
		}
	}
	if len(f.Source) > 0 {
		out.Sources = append([]string(nil), f.Source...)
	}
	for i, s := range f.Language {
		if strings.TrimSpace(s) == "" {
			return out, fail(fmt.Sprintf("filters.language[%d]", i), "empty string")
		}
	}
	if len(f.Language) > 0 {
		out.Languages = append([]string(nil), f.Language...)
	}
	for i, s := range f.BlockType {
		if !slices.Contains(corpus.BlockTypes(), s) {
			return out, fail(fmt.Sprintf("filters.block_type[%d]", i), "%q is not a block type (want %s)", s, strings.Join(corpus.BlockTypes(), ", "))
		}
	}
	if len(f.BlockType) > 0 {
		out.BlockTypes = append([]string(nil), f.BlockType...)
	}
	return out, nil
}

// date reads YYYY-MM-DD or RFC 3339, in UTC. A bare date as an upper bound means the end of
// that day, so date_to "2020-12-31" includes passages dated during the 31st. "" is the zero
// time; so is "0001-01-01" as a lower bound, which the caller tells apart by s (DateBounds).
func date(field, s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fail(field, "%q is not a date (want YYYY-MM-DD or RFC 3339)", s)
	}
	return t.UTC(), nil
}
