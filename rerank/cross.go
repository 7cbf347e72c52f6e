package rerank

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// PairScorer scores (query, passage) pairs with a cross-encoder: higher is more relevant.
// The embed package's *CrossEncoder satisfies it.
type PairScorer interface {
	Score(ctx context.Context, query string, passages []string) ([]float32, error)
}

// CrossRerank scores hits against query in batches and orders them by the cross-encoder
// score. Once o.Budget is spent no new batch starts: the candidates not reached are marked
// Unscored and keep their retrieval order after the scored ones. It never drops a hit.
// Hits without an Explain get one seeded from their retrieval score.
func CrossRerank(ctx context.Context, s PairScorer, query string, hits []Hit, o CrossOptions, explain bool) error {
	if err := o.Validate(); err != nil {
		return err
	}
	ensureExplain(hits)
	start := time.Now()
	texts := make([]string, 0, o.BatchSize)
	scored := 0
	for scored < len(hits) {
		if o.Budget > 0 && scored > 0 && time.Since(start) >= o.Budget {
			break
		}
		end := min(scored+o.BatchSize, len(hits))
		texts = texts[:0]
		for i := scored; i < end; i++ {
			texts = append(texts, hits[i].Text)
		}
		scores, err := s.Score(ctx, query, texts)
		if err != nil {
			return fmt.Errorf("cross-encoder on candidates %d-%d: %w", scored+1, end, err)
		}
		if len(scores) != len(texts) {
			return fmt.Errorf("cross-encoder on candidates %d-%d: got %d scores for %d passages", scored+1, end, len(scores), len(texts))
		}
		for i, sc := range scores {
			v := float64(sc)
			hits[scored+i].Explain.Cross = &v
		}
		scored = end
	}
	elapsed := time.Since(start)
	for i := scored; i < len(hits); i++ {
		e := hits[i].Explain
		e.Unscored = true
		if explain {
			e.Notes = append(e.Notes, fmt.Sprintf("cross-encoder budget %v spent after %d of %d candidates (%v): kept in retrieval order", o.Budget, scored, len(hits), elapsed.Round(time.Millisecond)))
		}
	}
	slices.SortStableFunc(hits[:scored], func(a, b Hit) int {
		x, y := *a.Explain.Cross, *b.Explain.Cross
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	normalize(hits, NormMinMax)
	for i := range hits {
		hits[i].Explain.Final = hits[i].Explain.Relevance
		if hits[i].Explain.Unscored {
			hits[i].Explain.Final = 0 // below every scored candidate's [0,1] score
		}
	}
	return nil
}
