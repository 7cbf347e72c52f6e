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

	cols         []*collection          // in the order configured; the first is the default
	byName       map[string]*collection // read-only after New
	reloadMu     sync.Mutex             // serialises reloads and Close
	closed       bool                   // guarded by reloadMu
	draining     atomic.Bool
	apiInFlight  atomic.Int64
	budget       *hitBudget
	chatLimit    *rateLimiter // per owner, POST /v1/chat
	chatInFlight atomic.Int64
	bufs         sync.Pool // *cappedBuffer: response bodies (encodeCapped)
}

// New validates opts and builds the handler. No index is loaded yet: /readyz answers 503
// and API endpoints answer 503 until the first successful Reload.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cols, err := collectionsOf(o)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, started: time.Now(), budget: newHitBudget(o), cols: cols,
		byName: make(map[string]*collection, len(cols)), chatLimit: newRateLimiter(o.ChatRatePerMinute, o.ChatBurst, time.Now)}
	for _, c := range cols {
		s.byName[c.name] = c
	}
	s.metrics = newMetrics(s.cols)
	if st, ok := o.Chat.(StoreStatser); ok {
		s.metrics.reg.MustRegister(storeCollector{st})
	}
	s.handler = s.cors(s.sameOrigin(s.routesMux()))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) reload(ctx context.Context, c *collection) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.closed {
		return errors.New("reloading index: server is closed")
	}
	start := time.Now()
	g, err := s.load(ctx, c)
	if err != nil {
		s.metrics.reloaded(c.name, false)
		if c.cur.Load() == nil {
			// Nothing was loaded yet (serve refusing its index at start): there is no
			// current index to keep, and nothing is being reloaded.
			s.opts.Logger.Error("loading the index failed", "collection", c.name, "err", err)
			return fmt.Errorf("loading index: %w", err)
		}
		s.opts.Logger.Error("reload failed, keeping the current index", "collection", c.name, "err", err)
		return fmt.Errorf("reloading index: %w", err)
	}
	old := c.cur.Swap(g)
	if old != nil {
		old.release()
	}
	s.metrics.reloaded(c.name, true)
	s.opts.Logger.Info("index loaded", "collection", c.name, "generation", g.id, "passages", g.stats.Passages,
		"mode", g.mode, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// load opens the index through the Loader. A panic inside it (a parser meeting a damaged
// file) is recovered here and returned as the error, so a reload, by SIGHUP or HTTP, never
// takes down a server that is serving the previous index.
func (s *Server) load(ctx context.Context, c *collection) (g *loadedIndex, err error) {
	defer func() {
		if p := recover(); p != nil {
			g, err = nil, fmt.Errorf("loading index panicked: %v", p)
		}
	}()
	e, closer, err := c.loader(ctx)
	if err != nil {
		return nil, err
	}
	st, err := e.Stats(ctx)
	if err != nil {
		if closer != nil {
			closer.Close()
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
	c.nextLoad++
	return newLoadedIndex(c.nextLoad, e, closer, st, mode, s.opts.Logger), nil
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
	for _, c := range s.cols {
		if old := c.cur.Swap(nil); old != nil {
			old.release()
		}
	}
	return nil
}

// acquire returns the default collection's current load with a reference held, or
// nil before its first load.
func (s *Server) acquire() *loadedIndex { return s.cols[0].acquire() }

// Search runs q on the default collection's engine currently loaded, holding it open for the duration, so callers
// outside HTTP (the chat pipelines of POST /v1/chat) follow reloads like requests do.
// DocFreq answers Engine.DocFreq from the live index, for the chat pipelines' attribution check:
// they follow reloads as Search does.
func (s *Server) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	g := s.acquire()
	if g == nil {
		return nil, 0, errors.New("no index loaded")
	}
	defer g.release()
	return g.engine.DocFreq(ctx, words)
}

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
