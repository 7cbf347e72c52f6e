package rerank

import (
	"fmt"
	"slices"

	"github.com/kairos-rag/kairos/corpus/timex"
)

// WikiChatSort reproduces the date reranking of WikiChat v1 (stanford-oval/WikiChat,
// pipelines/retriever.py, reranking_method "date"): a stable sort, best first, by
//
//	recent: the latest year the passage mentions (0 when it mentions none);
//	a year: how often the query year occurs among the passage's years.
//
// WikiChat deduplicates a passage's years before counting, so the year key is 0 or 1, and it
// expands "1990 to 1998" into every year between. Kairos's mentions do not record how a range
// was written, so here every range (also "1990–98") counts for the years inside it. WikiChat's
// query time is one year; for a range spec the first year is used, as the LLM there would
// have answered one year.
//
// The sort ignores scores, but it sets Explain.Final = key + relevance, where relevance is the
// candidate's retrieval rank normalised to (0,1] (NormRank): keys are integers, so Final
// decreases strictly down the sorted list and a caller that ranks by score keeps this order.
func WikiChatSort(hits []Hit, spec timex.Spec, explain bool) {
	if spec.IsNone() || spec.Kind == timex.KindAuto {
		return
	}
	ensureExplain(hits)
	normalize(hits, NormRank)
	for i := range hits {
		k := wikiChatKey(hits[i].Years, spec)
		e := hits[i].Explain
		e.Key = &k
		e.Final = float64(k) + e.Relevance
		if explain {
			if spec.Kind == timex.KindRecent {
				e.Notes = append(e.Notes, fmt.Sprintf("wikichat: latest year mentioned %d", k))
			} else {
				e.Notes = append(e.Notes, fmt.Sprintf("wikichat: year %d among the years mentioned: %d (0 or 1: WikiChat counts distinct years)", spec.From, k))
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return *b.Explain.Key - *a.Explain.Key })
}

func wikiChatKey(ms []timex.Mention, spec timex.Spec) int {
	if spec.Kind == timex.KindRecent {
		latest := 0
		for _, m := range ms {
			latest = max(latest, m.To)
		}
		return latest
	}
	for _, m := range ms {
		if m.From <= spec.From && spec.From <= m.To {
			return 1
		}
	}
	return 0
}
