package server

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/search"
)

// generation is one loaded engine. It is reference-counted: the server holds one reference
// while it is current and every request holds one while it runs, so a reload can swap the
// current generation at once and close the old engine only when its last request finishes.
type generation struct {
	id       uint64
	engine   Engine
	closer   io.Closer
	stats    search.Stats // read at load, for /metrics and the default mode
	mode     search.Mode  // default search mode for this index
	loadedAt time.Time
	log      *slog.Logger

	refs   atomic.Int64 // > 0 while usable; 0 means closed or closing
	closed chan struct{}
}

func newGeneration(id uint64, e Engine, c io.Closer, st search.Stats, mode search.Mode, log *slog.Logger) *generation {
	g := &generation{id: id, engine: e, closer: c, stats: st, mode: mode, loadedAt: time.Now(),
		log: log, closed: make(chan struct{})}
	g.refs.Store(1) // the server's reference
	return g
}

// acquire takes a reference unless the generation is already being closed. It never
// resurrects a closed generation, which is what makes the swap safe without a lock.
func (g *generation) acquire() bool {
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
func (g *generation) release() {
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
