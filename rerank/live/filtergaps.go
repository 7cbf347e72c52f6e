package live

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/nearest"
	"github.com/kairos-rag/kairos/search"
)

// FilterGap is the values of a query's source or language filter that no passage of the index
// has. A filter none of whose values the index has can only answer nothing, which reads as
// "nothing relevant": "faq" for the source "faq_covidbert" did that. Every front end refuses
// such a query (the CLI naming its flag, the HTTP API its field) and may note a gap that
// leaves some values.
type FilterGap struct {
	Field   string            // "filters.source" or "filters.language"
	What    string            // "source" or "language"
	Missing []string          // the values asked for that the index lacks, as asked
	All     bool              // no value of the filter is in the index
	Have    []string          // the index's values, sorted
	Near    map[string]string // a missing value: the index's value it most likely meant
}

// FilterGaps compares f's sources and languages with the index's (st.Sources,
// st.Languages). An index that does not count a field's values (an older one, or languages
// some passage lacks a code for) has no gap in it.
func FilterGaps(st search.Stats, f search.Filters) []FilterGap {
	var out []FilterGap
	if g, ok := filterGap("filters.source", "source", f.Sources, st.Sources, func(s string) string { return s }); ok {
		out = append(out, g)
	}
	if _, unknown := st.Languages[""]; !unknown {
		if g, ok := filterGap("filters.language", "language", f.Languages, st.Languages, langanalysis.Normalize); ok {
			out = append(out, g)
		}
	}
	return out
}

func filterGap(field, what string, values []string, have map[string]int, norm func(string) string) (FilterGap, bool) {
	if len(values) == 0 || len(have) == 0 {
		return FilterGap{}, false
	}
	g := FilterGap{Field: field, What: what, Have: slices.Sorted(maps.Keys(have))}
	for _, v := range values {
		if have[norm(v)] > 0 {
			continue
		}
		g.Missing = append(g.Missing, v)
		if s := nearName(v, g.Have); s != "" {
			if g.Near == nil {
				g.Near = map[string]string{}
			}
			g.Near[v] = s
		}
	}
	g.All = len(g.Missing) == len(values)
	return g, len(g.Missing) > 0
}

// HaveList is the index's values for a message: the first ten, then how many in all.
func (g FilterGap) HaveList() string {
	list := g.Have
	if len(list) > 10 {
		list = append(list[:10:10], fmt.Sprintf("... (%d in all)", len(g.Have)))
	}
	return strings.Join(list, ", ")
}

// nearName is the name of names that v most likely meant: one a typo or two away, else the
// only one that begins with v ("faq" for "faq_covidbert"), else "".
func nearName(v string, names []string) string {
	if s := nearest.Name(v, names); s != "" {
		return s
	}
	var prefixed []string
	for _, n := range names {
		if v != "" && strings.HasPrefix(strings.ToLower(n), strings.ToLower(v)) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// Describe says what the gap is, under name (the flag or field that gave the values):
// "--source faq: no passage of the index has that source (did you mean --source
// faq_covidbert?)". A refusal adds the index's values (HaveList).
func (g FilterGap) Describe(name string) string {
	var hints []string
	for _, v := range g.Missing {
		if s := g.Near[v]; s != "" {
			hints = append(hints, fmt.Sprintf("did you mean %s %s?", name, s))
		}
	}
	hint := ""
	if len(hints) > 0 {
		hint = " (" + strings.Join(hints, " ") + ")"
	}
	return fmt.Sprintf("%s %s: no passage of the index has that %s%s", name, strings.Join(g.Missing, ","), g.What, hint)
}
