package server

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/search"
)

// loadedIndex is one load of a collection's index: its Engine, opened at start or by a
// reload. It is reference-counted: the server holds one reference while it is current and
// every request holds one while it runs, so a reload can swap the current load at once and
// close the old engine only when its last request finishes. (It was called a generation; the
// metric kairos_index_generation and the JSON field "generation" keep that name for their
// readers: see the glossary in DEVELOPERS.md.)
type loadedIndex struct {
	id       uint64 // the load number: 1 for the first, one more at each successful reload
	engine   Engine
	closer   io.Closer
	stats    search.Stats // read at load, for /metrics and the default mode
	mode     search.Mode  // default search mode for this index
	loadedAt time.Time
	log      *slog.Logger

	refs   atomic.Int64 // > 0 while usable; 0 means closed or closing
	closed chan struct{}
}

func newLoadedIndex(id uint64, e Engine, c io.Closer, st search.Stats, mode search.Mode, log *slog.Logger) *loadedIndex {
	g := &loadedIndex{id: id, engine: e, closer: c, stats: st, mode: mode, loadedAt: time.Now(),
		log: log, closed: make(chan struct{})}
	g.refs.Store(1) // the server's reference
	return g
}

// acquire takes a reference unless the load is already being closed. It never
// resurrects a closed one, which is what makes the swap safe without a lock.
func (g *loadedIndex) acquire() bool {
	for {
		n := g.refs.Load()
		if n <= 0 {
			return false
		}
		if g.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the engine.
func (g *loadedIndex) release() {
	if g.refs.Add(-1) != 0 {
		return
	}
	if g.closer != nil {
		if err := g.closer.Close(); err != nil {
			g.log.Error("closing index", "generation", g.id, "err", err)
		}
	}
	g.log.Info("index closed", "generation", g.id)
	close(g.closed)
}
