package cli

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/nearest"
	"github.com/kairos-rag/kairos/search"
)

// checkFilters refuses a --source or --language filter none of whose values the index has:
// its answer would be "no hits", which reads as "nothing relevant" (issue 54: --source faq
// on an index whose source is faq_covidbert). The refusal lists what the index has, as
// kairos stats does. A value among others that the index lacks is noted on w.
func (q *queryFlags) checkFilters(fs *flag.FlagSet, st search.Stats, w io.Writer) error {
	if err := checkFilter(fs, "--source", "source", q.sources, st.Sources, func(s string) string { return s }, w); err != nil {
		return err
	}
	langs := st.Languages
	if _, unknown := langs[""]; unknown {
		return nil // a language without a code: nothing to compare with
	}
	return checkFilter(fs, "--language", "language", q.languages, langs, langanalysis.Normalize, w)
}

// checkFilter checks the values of one filter flag against the index's counts by value.
func checkFilter(fs *flag.FlagSet, flagName, what string, values []string, have map[string]int, norm func(string) string, w io.Writer) error {
	if len(values) == 0 || len(have) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(have))
	var missing []string
	for _, v := range values {
		if have[norm(v)] == 0 {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	list := names
	if len(list) > 10 {
		list = append(list[:10:10], fmt.Sprintf("... (%d in all)", len(names)))
	}
	var hints []string
	for _, v := range missing {
		if s := nearName(v, names); s != "" {
			hints = append(hints, fmt.Sprintf("did you mean %s %s?", flagName, s))
		}
	}
	hint := ""
	if len(hints) > 0 {
		hint = " (" + strings.Join(hints, " ") + ")"
	}
	if len(missing) == len(values) {
		return usageErr(fs, "%s %s: no passage of the index has that %s%s; its %ss: %s (kairos stats lists them)",
			flagName, strings.Join(missing, ","), what, hint, what, strings.Join(list, ", "))
	}
	fmt.Fprintf(w, "kairos: note: %s %s: no passage of the index has that %s%s; searching the others\n", flagName, strings.Join(missing, ","), what, hint)
	return nil
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
