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
	"github.com/kairos-rag/kairos/search"
)

// retrievalOptions say how to open an index for querying. Every command that queries an
// index (search, eval, serve, chat) opens it through openRetrieval, so they all offer the same
// modes and rerankers.
type retrievalOptions struct {
	// Location is the index to open; Index names it as a string instead (parsed on opening)
	// for the commands that hold one.
	Location indexer.Location
	Index    string
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
	// ModeDefaulted is set when the mode was not asked for but chosen as BM25 for want of a
	// --model: the notice above is then due if the index has dense vectors.
	ModeDefaulted bool
	// ModelNote says why no model was found for a dense index (findIndexModel), for the
	// notice above.
	ModelNote string
}

// timeOptions are the time reranker's options these retrieval options ask for.
func (o retrievalOptions) timeOptions() rerank.Options {
	t := rerank.DefaultOptions()
	if o.RecentHalfLife != 0 {
		t.RecentHalfLifeYears = o.RecentHalfLife
	}
	return t
}

// retrieval is an opened index with its models and reranking engine.
type retrieval struct {
	ix       *search.Index
	re       *rerank.Retriever
	closers  []func() error
	hasCross bool
}

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
	scorer := o.Scorer
	if o.Models.crossModel != "" && scorer == nil {
		ce, err := embed.OpenCrossEncoder(ctx, o.Models.options(o.Models.crossModel, o.Logger))
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("opening cross-encoder %s: %w", o.Models.crossModel, err)
		}
		r.closers = append(r.closers, ce.Close)
		scorer = ce
	}
	r.hasCross = scorer != nil
	if o.Location.IsZero() {
		loc, err := indexer.ParseLocation(o.Index)
		if err != nil {
			r.Close()
			return nil, err
		}
		o.Location = loc
	}
	ix, err := search.Open(ctx, o.Location, o.Search)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("opening index %s: %w", o.Location, err)
	}
	r.ix = ix
	r.closers = append(r.closers, ix.Close)
	if d := ix.Manifest().Dense; d != nil && o.ModeDefaulted && o.Notes != nil {
		why := d.Model.Name
		if o.ModelNote != "" {
			why = o.ModelNote
		}
		fmt.Fprintf(o.Notes, "kairos: %s has dense vectors (%s), but without --model only BM25 runs; add --model DIR for hybrid search (or --mode bm25 to silence this)\n", o.Location, why)
	}
	r.re, err = rerank.NewRetriever(ix, rerank.RetrieverOptions{Logger: o.Logger, Scorer: scorer, Time: o.timeOptions()})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("opening index %s: %w", o.Location, err)
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
