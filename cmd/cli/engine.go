package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

// retrievalOptions say how to open an index for querying. Every command that queries an
// index (search, eval, serve, chat) opens it as a live index (rerank/live) with the models
// these name, so they all offer the same modes and rerankers, default the mode alike and
// refuse alike.
type retrievalOptions struct {
	Location indexer.Location
	Models   modelFlags // --model for dense/hybrid, --cross-model for the cross stage
	Search   search.Options
	// Scorer is an already opened cross-encoder (serve keeps its models across index reloads);
	// Search.Encoder likewise. When nil, Models says what to open.
	Scorer rerank.PairScorer
	// RecentHalfLife is the default half-life in years of the time need "recent" (serve's
	// --recent-half-life); 0 means rerank.DefaultOptions'. A query may override it.
	RecentHalfLife float64
	Logger         *slog.Logger
	// Notes receives one-line notices for the person at the terminal (search, eval), such as
	// a dense index searched with BM25 only because no --model was given; nil: none.
	Notes io.Writer
	// ModeAsked is set when the command line names a mode: the notice above is due only when
	// the index chose BM25 by default.
	ModeAsked bool
	// ModelNote says why no model was found for a dense index (findIndexModel), for the
	// notice above.
	ModelNote string
}

// live returns the options of the live index these retrieval options open.
func (o retrievalOptions) live() live.Options {
	return live.Options{Search: o.Search, Scorer: o.Scorer, RecentHalfLifeYears: o.RecentHalfLife, Logger: o.Logger}
}

// retrieval is an opened live index with the models opened for it.
type retrieval struct {
	re      *live.Index
	closers []func() error
}

// openRetrieval opens the models o names, then the live index at o.Location with them.
func openRetrieval(ctx context.Context, o retrievalOptions) (*retrieval, error) {
	r := &retrieval{}
	if o.Models.model != "" && o.Search.Encoder == nil {
		enc, err := openEncoder(ctx, &o.Models, o.Logger)
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, enc.Close)
		o.Search.Encoder = enc
	}
	if o.Models.crossModel != "" && o.Scorer == nil {
		ce, err := embed.OpenCrossEncoder(ctx, o.Models.options(o.Models.crossModel, o.Logger))
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("opening cross-encoder %s: %w", o.Models.crossModel, err)
		}
		r.closers = append(r.closers, ce.Close)
		o.Scorer = ce
	}
	ix, err := live.Open(ctx, o.Location, o.live())
	if err != nil {
		r.Close()
		return nil, err // live names the index: "loading index: DIR: ..."
	}
	r.re = ix
	r.closers = append(r.closers, ix.Close)
	if l := ix.Acquire(); l != nil {
		if st := l.Stats(); st.Dense && !l.Capabilities().Dense && !o.ModeAsked && o.Notes != nil {
			why := st.Model
			if o.ModelNote != "" {
				why = o.ModelNote
			}
			fmt.Fprintf(o.Notes, "kairos: %s has dense vectors (%s), but without --model only BM25 runs; add --model DIR for hybrid search (or --mode bm25 to silence this)\n", o.Location, why)
		}
		l.Release()
	}
	return r, nil
}

// modeOf is the mode a query asking for mode runs: mode, or the live index's default.
func (r *retrieval) modeOf(mode string) string {
	if mode != "" {
		return mode
	}
	l := r.re.Acquire()
	if l == nil {
		return mode
	}
	defer l.Release()
	return string(l.Mode())
}

// Close releases the index and any models.
func (r *retrieval) Close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	return errors.Join(errs...)
}
