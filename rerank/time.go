package rerank

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
)

// TimeRerank reorders hits by (1-Weight)*relevance + Weight*time score, where the time score
// says how well the passage's mentioned years and date fit spec. It never drops a hit. Hits
// must arrive in retrieval (or cross-encoder) order; hits without an Explain get one seeded
// from their retrieval score. A none spec leaves the order unchanged. explain adds human-readable
// notes. Candidates marked Unscored by the cross-encoder stay after the scored ones.
func TimeRerank(hits []Hit, spec timex.Spec, o Options, explain bool) {
	if spec.IsNone() || spec.Kind == timex.KindAuto || len(hits) == 0 {
		if explain {
			ensureExplain(hits)
			for i := range hits {
				hits[i].Explain.Notes = append(hits[i].Explain.Notes, "no time need ("+spec.String()+"): order unchanged")
			}
		}
		return
	}
	ensureExplain(hits)
	normalize(hits, o.Normalize)
	now := o.now()
	scores := make([]float64, len(hits)) // one allocation for all the TimeScore pointers
	for i := range hits {
		h := &hits[i]
		ts := &scores[i]
		var note string
		if spec.Kind == timex.KindRecent {
			*ts, note = recentScore(h, now, o, explain)
		} else {
			*ts, note = rangeScore(h, spec.From, spec.To, o, explain)
		}
		e := h.Explain
		e.TimeScore = ts
		e.Final = (1-o.Weight)*e.Relevance + o.Weight**ts
		if explain && note != "" {
			e.Notes = append(e.Notes, note)
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.Explain.Unscored != b.Explain.Unscored {
			if a.Explain.Unscored {
				return 1
			}
			return -1
		}
		switch {
		case a.Explain.Final > b.Explain.Final:
			return -1
		case a.Explain.Final < b.Explain.Final:
			return 1
		}
		return 0
	})
}

// normalize sets Explain.Relevance from the stage score (Cross when set, else Retrieval),
// separately for scored and unscored candidates, which are in order within each group.
func normalize(hits []Hit, how Normalization) {
	for _, unscored := range []bool{false, true} {
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for i := range hits {
			if hits[i].Explain.Unscored != unscored {
				continue
			}
			s := stageScore(hits[i].Explain)
			lo, hi, n = min(lo, s), max(hi, s), n+1
		}
		r := 0
		for i := range hits {
			e := hits[i].Explain
			if e.Unscored != unscored {
				continue
			}
			switch {
			case how == NormRank:
				e.Relevance = 1 - float64(r)/float64(n)
			case hi > lo:
				e.Relevance = (stageScore(e) - lo) / (hi - lo)
			default:
				e.Relevance = 1
			}
			r++
		}
	}
}

func stageScore(e *Explanation) float64 {
	if e.Cross != nil {
		return *e.Cross
	}
	return e.Retrieval
}

// rangeScore rates a passage for the years from..to: the best closeness of a mention (1 inside,
// halving every DecayYears outside), plus credit for naming the first and the last year
// exactly and for the share of mentions that are close. The document date counts as one more
// mention.
func rangeScore(h *Hit, from, to int, o Options, explain bool) (float64, string) {
	var best, sum float64
	n, bestF, bestT := 0, 0, 0
	hitFrom, hitTo, covFrom := false, false, false
	visit := func(f, t int) {
		gap := 0
		switch {
		case t < from:
			gap = from - t
		case f > to:
			gap = f - to
		}
		c := math.Exp2(-float64(gap) / o.DecayYears)
		if c > best {
			best, bestF, bestT = c, f, t
		}
		sum += c
		n++
		hitFrom = hitFrom || f == from || t == from
		hitTo = hitTo || f == to || t == to
		covFrom = covFrom || (f < from && from < t)
	}
	for _, m := range h.Years {
		visit(m.From, m.To)
	}
	if !h.Date.IsZero() {
		visit(h.Date.Year(), h.Date.Year())
	}
	if n == 0 {
		if explain {
			return o.NoYearScore, "mentions no year"
		}
		return o.NoYearScore, ""
	}
	endW := o.EndWeight
	if from == to {
		endW = 0 // one year: its start is its end
	}
	start := b2f(hitFrom)
	if !hitFrom && covFrom {
		start = o.CoverShare
	}
	score := (best + o.StartWeight*start + endW*b2f(hitTo) + o.FocusWeight*sum/float64(n)) /
		(1 + o.StartWeight + endW + o.FocusWeight)
	if !explain {
		return score, ""
	}
	var note string
	if best == 1 {
		note = fmt.Sprintf("mentions %s, within %s", rangeLabel(bestF, bestT), rangeLabel(from, to))
	} else {
		note = fmt.Sprintf("nearest mention %s is %d years from %s", rangeLabel(bestF, bestT), max(from-bestT, bestF-to), rangeLabel(from, to))
	}
	switch {
	case hitFrom && hitTo && from != to:
		note += fmt.Sprintf("; names both %d and %d", from, to)
	case hitFrom:
		note += fmt.Sprintf("; names the start year %d", from)
	case covFrom:
		note += fmt.Sprintf("; a mentioned range covers the start year %d", from)
	case hitTo:
		note += fmt.Sprintf("; names the end year %d", to)
	}
	return score, note + fmt.Sprintf("; %d of %d mentions close", countClose(h, from, to, o), n)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func countClose(h *Hit, from, to int, o Options) int {
	c := 0
	for _, m := range h.Years {
		if m.To >= from-int(o.DecayYears) && m.From <= to+int(o.DecayYears) {
			c++
		}
	}
	if !h.Date.IsZero() && h.Date.Year() >= from-int(o.DecayYears) && h.Date.Year() <= to+int(o.DecayYears) {
		c++
	}
	return c
}

func rangeLabel(from, to int) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d..%d", from, to)
}

// recentScore rates a passage by its newest year (mentioned or dated): 1 for the current
// year or later, halving every RecentHalfLifeYears before it.
func recentScore(h *Hit, now time.Time, o Options, explain bool) (float64, string) {
	latest, src := math.Inf(-1), ""
	for _, m := range h.Years {
		if y := float64(m.To) + 0.5; y > latest {
			latest, src = y, "mention"
		}
	}
	if !h.Date.IsZero() {
		if y := fractionalYear(h.Date); y > latest {
			latest, src = y, "date"
		}
	}
	if math.IsInf(latest, -1) {
		if explain {
			return o.NoYearScore, "no year or date"
		}
		return o.NoYearScore, ""
	}
	age := max(0, fractionalYear(now)-latest)
	score := math.Exp2(-age / o.RecentHalfLifeYears)
	if !explain {
		return score, ""
	}
	return score, fmt.Sprintf("newest %s %d, %.1f years old", src, int(latest), age)
}

func fractionalYear(t time.Time) float64 {
	return float64(t.Year()) + float64(t.YearDay()-1)/365
}
