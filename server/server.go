package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// Server serves the Kairos HTTP API. Create it with New, load the index with Reload, then
// use it as an http.Handler. It is safe for concurrent use.
type Server struct {
	opts    Options
	handler http.Handler
	metrics *metrics
	started time.Time

	cur         atomic.Pointer[generation]
	reloadMu    sync.Mutex // serialises Reload and Close
	nextGen     uint64     // guarded by reloadMu
	closed      bool       // guarded by reloadMu
	draining    atomic.Bool
	apiInFlight atomic.Int64
	budget      *hitBudget
}

// New validates opts and builds the handler. No index is loaded yet: /readyz answers 503
// and API endpoints answer 503 until the first successful Reload.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, started: time.Now(), budget: newHitBudget(o)}
	s.metrics = newMetrics(s.cur.Load)
	s.handler = s.cors(s.routesMux())
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Reload opens the index again through the Loader and swaps it in atomically. Requests
// already running finish on the old engine, which is closed after the last of them; new
// requests see the new engine. On error the current engine stays in service; the first load's
// error says "loading index", later ones "reloading index".
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.closed {
		return errors.New("reloading index: server is closed")
	}
	start := time.Now()
	g, err := s.load(ctx)
	if err != nil {
		s.metrics.reloaded(false)
		if s.cur.Load() == nil {
			// Nothing was loaded yet (serve refusing its index at start): there is no
			// current index to keep, and nothing is being reloaded.
			s.opts.Logger.Error("loading the index failed", "err", err)
			return fmt.Errorf("loading index: %w", err)
		}
		s.opts.Logger.Error("reload failed, keeping the current index", "err", err)
		return fmt.Errorf("reloading index: %w", err)
	}
	old := s.cur.Swap(g)
	if old != nil {
		old.release()
	}
	s.metrics.reloaded(true)
	s.opts.Logger.Info("index loaded", "generation", g.id, "passages", g.stats.Passages,
		"mode", g.mode, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// load opens the index through the Loader. A panic inside it (a parser meeting a damaged
// file) is recovered here and returned as the error, so a reload, by SIGHUP or HTTP, never
// takes down a server that is serving the previous index.
func (s *Server) load(ctx context.Context) (g *generation, err error) {
	defer func() {
		if p := recover(); p != nil {
			g, err = nil, fmt.Errorf("loading index panicked: %v", p)
		}
	}()
	e, c, err := s.opts.Loader(ctx)
	if err != nil {
		return nil, err
	}
	st, err := e.Stats(ctx)
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("reading index stats: %w", err)
	}
	mode := s.opts.DefaultMode
	if mode == "" {
		mode = search.ModeBM25
		if st.Dense {
			mode = search.ModeHybrid
		}
	}
	s.nextGen++
	return newGeneration(s.nextGen, e, c, st, mode, s.opts.Logger), nil
}

// Drain makes /readyz answer 503 so a load balancer stops sending traffic before shutdown;
// requests keep being served.
func (s *Server) Drain() { s.draining.Store(true) }

// Close releases the current engine. Call it after http.Server.Shutdown has returned; a
// request still running keeps the engine open until it finishes.
func (s *Server) Close() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.closed = true
	s.draining.Store(true)
	if old := s.cur.Swap(nil); old != nil {
		old.release()
	}
	return nil
}

// acquire returns the current generation with a reference held, or nil before the first
// load. If it races with a swap it retries, so it only fails when nothing is loaded.
func (s *Server) acquire() *generation {
	for {
		g := s.cur.Load()
		if g == nil {
			return nil
		}
		if g.acquire() {
			return g
		}
	}
}

// Search runs q on the engine currently loaded, holding it open for the duration, so callers
// outside HTTP (the chat pipelines of POST /v1/chat) follow reloads like requests do.
func (s *Server) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	g := s.acquire()
	if g == nil {
		return rerank.Result{}, errors.New("no index loaded")
	}
	defer g.release()
	if q.Mode == "" {
		q.Mode = g.mode
	}
	return g.engine.Search(ctx, q)
}
