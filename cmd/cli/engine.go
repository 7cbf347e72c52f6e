package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// retrievalOptions say how to open an index for querying. Every command that queries an
// index (search, eval, serve, chat) opens it through openRetrieval, so they all offer the same
// modes and rerankers.
type retrievalOptions struct {
	Index  string
	Logger *slog.Logger
}

// retrieval is an opened index with its reranking engine.
type retrieval struct {
	ix      *search.Index
	re      *rerank.Engine
	closers []func() error
}

func openRetrieval(ctx context.Context, o retrievalOptions) (*retrieval, error) {
	ix, err := search.Open(o.Index, search.Options{})
	if err != nil {
		return nil, fmt.Errorf("opening index %s: %w", o.Index, err)
	}
	r := &retrieval{ix: ix, closers: []func() error{ix.Close}}
	r.re, err = rerank.NewEngine(ix, rerank.EngineOptions{Logger: o.Logger})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("opening index %s: %w", o.Index, err)
	}
	return r, nil
}

// Close releases the index and any models.
func (r *retrieval) Close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	return errors.Join(errs...)
}
