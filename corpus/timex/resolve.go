package timex

import (
	"strings"
	"time"
)

// Resolve turns an auto Spec into a concrete one by reading the query; other Specs are
// returned unchanged. now anchors relative expressions. The rules, first match wins:
//
//  1. Years and ranges in the query (as Extract finds them, so "from Jul 1929 to Sep 1937",
//     "in the 1990s", "2006–07", "from 880 to 887"). When the query states a range, single
//     years elsewhere are context and are ignored ("the man born in 1911 held what office from
//     1939 to 1941?" gives 1939..1941); otherwise the span of all years is used. A year after
//     "before"/"prior to" means the ten years before it (Y-10..Y-1); after "after" it means
//     Y+1..now, after "since" Y..now; "as of Y" (or "as of March 2005") is Y, and it takes
//     priority over every other year in the query.
//  2. "last year", "this year", "next year" relative to now.
//  3. Recency words: latest, current, currently, recent, recently, now, nowadays, today,
//     newest, presently, "as of" (with no year), "these days", "up to date" give recent.
//  4. Otherwise none.
func (s Spec) Resolve(query string, now time.Time) Spec {
	if s.Kind != KindAuto {
		return s
	}
	toks := tokenize(query)
	if sp, ok := fromMentions(query, toks, now.Year()); ok {
		return sp
	}
	for i := 0; i+1 < len(toks); i++ {
		if toks[i+1].w != "year" {
			continue
		}
		switch toks[i].w {
		case "last", "previous":
			return Spec{Kind: KindRange, From: now.Year() - 1, To: now.Year() - 1}
		case "this", "current":
			return Spec{Kind: KindRange, From: now.Year(), To: now.Year()}
		case "next", "coming":
			return Spec{Kind: KindRange, From: now.Year() + 1, To: now.Year() + 1}
		}
	}
	for i, t := range toks {
		switch t.w {
		case "latest", "current", "currently", "recent", "recently", "now", "nowadays", "today",
			"newest", "presently":
			return Spec{Kind: KindRecent}
		case "as":
			if i+1 < len(toks) && toks[i+1].w == "of" {
				return Spec{Kind: KindRecent}
			}
		case "these":
			if i+1 < len(toks) && toks[i+1].w == "days" {
				return Spec{Kind: KindRecent}
			}
		case "up":
			if i+2 < len(toks) && toks[i+1].w == "to" && toks[i+2].w == "date" {
				return Spec{Kind: KindRecent}
			}
		}
	}
	return Spec{Kind: KindNone}
}

type token struct {
	w   string // lower-cased word or number
	pos int    // byte offset in the query
}

// tokenize splits a query into lower-cased runs of letters or digits.
func tokenize(q string) []token {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		if !isLetter(c) && !isDigit(c) {
			i++
			continue
		}
		j := i
		for j < len(q) && (isLetter(q[j]) == isLetter(c)) && (isLetter(q[j]) || isDigit(q[j])) {
			j++
		}
		out = append(out, token{w: strings.ToLower(q[i:j]), pos: i})
		i = j
	}
	return out
}

func fromMentions(query string, toks []token, nowYear int) (Spec, bool) {
	ms := Extract(query)
	if len(ms) == 0 {
		return Spec{}, false
	}
	// "As of" fixes the moment the question is asked about: it outranks every other year the
	// question mentions ("who led the party formed in 1990, as of 2005?" asks about 2005).
	var asOf []Mention
	for _, m := range ms {
		if cueBefore(toks, m.Pos) == "as of" {
			asOf = append(asOf, m)
		}
	}
	if len(asOf) > 0 {
		ms = asOf
	}
	hasRange := false
	for _, m := range ms {
		if m.To > m.From {
			hasRange = true
		}
	}
	from, to := 0, 0
	for _, m := range ms {
		if hasRange && m.To == m.From {
			continue
		}
		f, t := m.From, m.To
		if m.From == m.To {
			switch cueBefore(toks, m.Pos) {
			case "before", "prior":
				f, t = m.From-10, m.From-1
			case "after":
				f, t = m.From+1, max(m.From+1, nowYear)
			case "since":
				t = max(m.From, nowYear)
			}
		}
		if from == 0 || f < from {
			from = f
		}
		if t > to {
			to = t
		}
	}
	if from < MinYear {
		from = MinYear
	}
	return Spec{Kind: KindRange, From: from, To: to}, true
}

// cueBefore returns the word that governs the year at byte pos, skipping the day, month and
// article that may stand between ("after 5 December 2016", "prior to the 1990s").
func cueBefore(toks []token, pos int) string {
	k := -1
	for i, t := range toks {
		if t.pos == pos {
			k = i
			break
		}
	}
	for i := k - 1; i >= 0 && i >= k-4; i-- {
		w := toks[i].w
		switch {
		case isMonth(w) || isDigit(w[0]) || w == "the" || w == "early" || w == "late" || w == "mid":
			continue
		case w == "to" && i > 0 && toks[i-1].w == "prior":
			return "prior"
		case w == "of" && i > 0 && toks[i-1].w == "as":
			return "as of"
		}
		return w
	}
	return ""
}
