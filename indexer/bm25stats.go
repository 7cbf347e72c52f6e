package indexer

import (
	"context"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// liveTokens counts the analysed tokens of the text field over the live passages of store:
// what a committed manifest records, counted afresh (a manifest without statistics, and the
// tests that check the recorded count).
func liveTokens(ctx context.Context, store backend.Passages, text *langanalysis.Passages) (int64, error) {
	var n int64
	err := store.Each(ctx, func(_ uint32, p Passage) error {
		toks, err := text.Terms(p.Language, p.Text, nil)
		n += int64(len(toks))
		return err
	})
	return n, err
}
