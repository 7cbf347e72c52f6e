package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

// filterFlags names the flag of each filter field that live.FilterGaps checks.
var filterFlags = map[string]string{"filters.source": "--source", "filters.language": "--language"}

// checkFilters refuses a --source or --language filter none of whose values the index has
// (live.FilterGaps: the HTTP API refuses the same), listing what the index has, as kairos
// stats does. A value among others that the index lacks is noted on w.
func (q *queryFlags) checkFilters(fs *flag.FlagSet, st search.Stats, w io.Writer) error {
	for _, g := range live.FilterGaps(st, search.Filters{Sources: q.sources, Languages: q.languages}) {
		desc := g.Describe(filterFlags[g.Field])
		if g.All {
			return usageErr(fs, "%s; its %ss: %s (kairos stats lists them)", desc, g.What, g.HaveList())
		}
		fmt.Fprintf(w, "kairos: note: %s; searching the others\n", desc)
	}
	return nil
}

// checkBatch refuses, before the first query runs, a batch with a query the index cannot
// answer (a mode or rerank stage it cannot serve: live.Index.Check) or whose source or
// language filter no passage has, naming its line: found when reached, it would end the run
// and lose every answer before it.
func checkBatch(ix *live.Index, st search.Stats, path string, queries []batchQuery) error {
	for _, q := range queries {
		err := ix.Check(q.q)
		if err == nil {
			for _, g := range live.FilterGaps(st, q.q.Filters) {
				if g.All {
					err = fmt.Errorf("%s; its %ss: %s (kairos stats lists them)", g.Describe(g.Field), g.What, g.HaveList())
					break
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: query %s: %w", path, q.line, q.qid(), err)
		}
	}
	return nil
}
