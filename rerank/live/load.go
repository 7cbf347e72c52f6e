package live

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Load is one load of a live index: the engine opened at start or by a reload, with what
// was read of it then. It is reference-counted: the Index holds one reference while it is
// current and every caller of Acquire one until it calls Release, so a reload swaps the
// current load at once and the old engine is closed when its last query finishes.
type Load struct {
	engine   Engine
	stats    search.Stats // read at load
	caps     Capabilities
	mode     search.Mode // DefaultMode(caps)
	reloads  uint64      // successful loads of the Index before this one
	loadedAt time.Time
	log      *slog.Logger

	refs atomic.Int64 // > 0 while usable; 0 means closed or closing
}

func newLoad(e Engine, reloads uint64, log *slog.Logger) *Load {
	caps := e.Capabilities()
	l := &Load{engine: e, stats: e.Stats(), caps: caps, mode: DefaultMode(caps), reloads: reloads,
		loadedAt: time.Now(), log: log}
	l.refs.Store(1) // the Index's reference
	return l
}

// acquire takes a reference unless the load is already being closed. It never resurrects a
// closed one, which is what makes the swap safe without a lock.
func (l *Load) acquire() bool {
	for {
		n := l.refs.Load()
		if n <= 0 {
			return false
		}
		if l.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference; the last one closes the engine.
func (l *Load) Release() {
	if l.refs.Add(-1) != 0 {
		return
	}
	if err := l.engine.Close(); err != nil {
		l.log.Error("closing index", "generation", l.stats.Generation, "err", err)
	}
	l.log.Info("index closed", "generation", l.stats.Generation, "reloads", l.reloads)
}

// Stats describes the index as it was loaded: its generation number, counts, languages.
func (l *Load) Stats() search.Stats { return l.stats }

// Capabilities says what this load can serve beyond BM25.
func (l *Load) Capabilities() Capabilities { return l.caps }

// Mode is the mode of a query that names none (DefaultMode).
func (l *Load) Mode() search.Mode { return l.mode }

// Reloads is how many successful loads of the index preceded this one: 0 for the load at
// start, one more at each successful reload (the generation number is Stats().Generation).
func (l *Load) Reloads() uint64 { return l.reloads }

// LoadedAt is when this load was opened.
func (l *Load) LoadedAt() time.Time { return l.loadedAt }

// Search answers q: a query that names no mode runs the load's Mode; one that asks for what
// this load cannot serve is refused with an error wrapping ErrUnsupported before it reaches
// search or rerank, whose errors would read as faults.
func (l *Load) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	if q.Mode == "" {
		q.Mode = l.mode
	}
	if err := l.check(q); err != nil {
		return rerank.Result{}, err
	}
	return l.engine.Search(ctx, q)
}

// Check refuses a query this load cannot answer, as Search would, without running it: a
// batch checks every query before the first runs, so that its last line's mistake does not
// cost the work of all the others.
func (l *Load) Check(q rerank.Query) error {
	if q.Mode == "" {
		q.Mode = l.mode
	}
	return l.check(q)
}

// check refuses what the load cannot answer, naming what would let it.
func (l *Load) check(q rerank.Query) error {
	if q.Mode != search.ModeBM25 && !l.caps.Dense {
		if !l.stats.Dense {
			return &UnsupportedError{Err: ErrUnsupportedMode, What: "mode " + string(q.Mode),
				Fix: "this index has no dense vectors: build them with kairos index --model DIR, or ask for mode bm25"}
		}
		return &UnsupportedError{Err: ErrUnsupportedMode, What: "mode " + string(q.Mode),
			Fix: "it needs the index's query encoder, and none was given (--model DIR); or ask for mode bm25"}
	}
	if slices.Contains(q.Rerank, rerank.StageCross) && !l.caps.Cross {
		return &UnsupportedError{Err: ErrUnsupportedStage, What: "rerank stage cross",
			Fix: "no cross-encoder is configured (--cross-model DIR)"}
	}
	if err := q.Time.Validate(); err != nil {
		return &InvalidQueryError{Err: err}
	}
	return nil
}

// Passage returns the passage with the given id (e.g. "12#0"), or an error wrapping
// search.ErrNotFound.
func (l *Load) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	return l.engine.Passage(ctx, id)
}

// DocFreq says how many passages hold each word (after the index's analysis), and how many
// passages the index has.
func (l *Load) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	return l.engine.DocFreq(ctx, words)
}
