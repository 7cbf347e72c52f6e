// Package live serves an index as a live index: the index at a location, opened with its
// models, answering queries (Search, Passage, Stats, DocFreq) and reloaded under load. It is
// what sits below the HTTP server and the chat layer, as zoekt's Searcher sits below its
// web server: the server routes requests to it, chat retrieves through it, and cmd only
// opens the models and wires the flags.
//
// A live index owns three decisions that each front end made apart before it:
//   - what a query that names no mode runs (DefaultMode: hybrid where the index can serve it,
//     else bm25);
//   - what this index, with these models, cannot answer (a dense mode without vectors or a
//     query encoder, the cross stage without a cross-encoder): typed errors (ErrUnsupported)
//     that a front end maps to a client error in one place;
//   - reload: Reload opens the live generation afresh and swaps it in at once, while queries
//     running finish on the load they started on (reference counts), which is closed after
//     the last of them.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Options say how a live index opens its location and answers. The zero value opens a
// BM25-only index with the default tuning.
type Options struct {
	// Search tunes retrieval and is applied at every open, reloads included. Its Encoder,
	// when set, embeds queries for the dense and hybrid modes (it must match the index's
	// model); without one those modes are refused (ErrUnsupportedMode).
	Search search.Options
	// Scorer is the cross-encoder of the cross rerank stage; nil refuses that stage
	// (ErrUnsupportedStage).
	Scorer rerank.PairScorer
	// RecentHalfLifeYears is the default half-life of the time need "recent" (a query may
	// override it); 0 means rerank.DefaultOptions'.
	RecentHalfLifeYears float64
	// Name names the index in log lines (a server's collection); "" names none.
	Name string
	// Logger receives a line for each load, failed reload and close; nil discards them.
	Logger *slog.Logger
}

// Index is a live index: the current load of an index, swapped by Reload. It is safe for
// concurrent use. Create it with Open (loaded) or New (loaded by its first Reload).
type Index struct {
	open OpenFunc
	log  *slog.Logger

	mu      sync.Mutex // serialises Reload and Close
	closed  bool       // guarded by mu
	loads   uint64     // successful loads so far; guarded by mu
	current atomic.Pointer[Load]
}

// New returns a live index that opens its engine with open. Nothing is loaded yet: queries
// fail with ErrNotLoaded until the first successful Reload. o.Name and o.Logger apply here;
// the rest of o is open's (Opener).
func New(open OpenFunc, o Options) *Index {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Name != "" {
		log = log.With("collection", o.Name)
	}
	return &Index{open: open, log: log}
}

// Open opens the index at loc with o's models and loads it.
func Open(ctx context.Context, loc indexer.Location, o Options) (*Index, error) {
	ix := New(Opener(loc, o), o)
	if err := ix.Reload(ctx); err != nil {
		return nil, err
	}
	return ix, nil
}

// Reload opens the index afresh and swaps the new load in. Queries already running finish
// on the old load, which is closed after the last of them; new queries see the new one. On
// error the current load stays in service. A panic while opening (a parser meeting a
// damaged file) is returned as the error, so a reload never takes down an index that serves.
func (ix *Index) Reload(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	first := ix.current.Load() == nil
	if ix.closed {
		return errors.New("reloading index: the index is closed")
	}
	start := time.Now()
	l, err := ix.load(ctx)
	if err != nil {
		if first {
			// Nothing was loaded yet (an index refused at start): there is no current load
			// to keep, and nothing was being reloaded. The caller reports the error, so it
			// is not logged here too (a command would print it twice).
			return fmt.Errorf("loading index: %w", err)
		}
		ix.log.Error("reload failed, keeping the current index", "err", err)
		return fmt.Errorf("reloading index: %w", err)
	}
	old := ix.current.Swap(l)
	ix.log.Info("index loaded", "generation", l.stats.Generation, "reloads", l.reloads,
		"passages", l.stats.Passages, "mode", l.mode, "took", time.Since(start).Round(time.Millisecond))
	if old != nil {
		old.Release() // closed now, or by its last query
	}
	return nil
}

func (ix *Index) load(ctx context.Context) (l *Load, err error) {
	defer func() {
		if p := recover(); p != nil {
			l, err = nil, fmt.Errorf("opening the index panicked: %v", p)
		}
	}()
	e, err := ix.open(ctx)
	if err != nil {
		return nil, err
	}
	l = newLoad(e, ix.loads, ix.log)
	ix.loads++
	return l, nil
}

// Close stops serving: queries after it fail with ErrNotLoaded, queries running finish on
// their load, which is closed after the last of them. Reload fails after Close.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.closed = true
	if old := ix.current.Swap(nil); old != nil {
		old.Release()
	}
	return nil
}

// Acquire returns the current load with a reference held, which the caller must Release,
// or nil before the first load and after Close. Everything asked of one load (a batch of
// queries, its default mode, the stats reported beside it) comes from the same generation.
func (ix *Index) Acquire() *Load {
	for {
		l := ix.current.Load()
		if l == nil {
			return nil
		}
		if l.acquire() {
			return l
		}
		// It raced with a swap: the new load is current now.
	}
}

// with runs fn on the current load, held for its duration.
func with[T any](ix *Index, fn func(*Load) (T, error)) (T, error) {
	l := ix.Acquire()
	if l == nil {
		var zero T
		return zero, ErrNotLoaded
	}
	defer l.Release()
	return fn(l)
}

// Search answers q on the current load (Load.Search). Its signature is chat's retriever's
// and rerank.Retriever's, so that chat follows reloads as HTTP requests do.
func (ix *Index) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	return with(ix, func(l *Load) (rerank.Result, error) { return l.Search(ctx, q) })
}

// Check refuses a query the current load cannot answer (Load.Check).
func (ix *Index) Check(q rerank.Query) error {
	_, err := with(ix, func(l *Load) (struct{}, error) { return struct{}{}, l.Check(q) })
	return err
}

// Passage returns one passage of the current load by id (Load.Passage).
func (ix *Index) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	return with(ix, func(l *Load) (corpus.Passage, error) { return l.Passage(ctx, id) })
}

// Stats describes the current load.
func (ix *Index) Stats() (search.Stats, error) {
	return with(ix, func(l *Load) (search.Stats, error) { return l.Stats(), nil })
}

// DocFreq says how many passages of the current load hold each word, and how many it has:
// chat's attribution check (chat.TermStats).
func (ix *Index) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	type out struct {
		df []int
		n  int
	}
	o, err := with(ix, func(l *Load) (out, error) {
		df, n, err := l.DocFreq(ctx, words)
		return out{df, n}, err
	})
	return o.df, o.n, err
}
