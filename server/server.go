package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairos-rag/kairos/rerank/live"
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
	newConvLimit *rateLimiter // new conversations per client address (Options.ChatNewPerDay)
	chatInFlight atomic.Int64
	handlers     atomic.Int64 // requests in their handlers (instrument), for Wait
	bufs         sync.Pool    // *cappedBuffer: response bodies (encodeCapped)
}

// New validates opts and builds the handler. No index is loaded yet: /readyz answers 503
// and API endpoints answer 503 until the first successful Reload.
func New(opts Options) (*Server, error) {
	o := opts
	o.SetDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	cols, err := collectionsOf(o)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, started: time.Now(), budget: newHitBudget(o), cols: cols,
		byName: make(map[string]*collection, len(cols)), chatLimit: newRateLimiter(o.ChatRatePerMinute, o.ChatBurst, time.Now),
		newConvLimit: newRateLimiter(float64(o.ChatNewPerDay)/(24*60), min(o.ChatNewPerDay, 100), time.Now)}
	for _, c := range cols {
		s.byName[c.name] = c
	}
	s.metrics = newMetrics(s.cols)
	if st, ok := o.Chat.(StoreStatser); ok {
		s.metrics.reg.MustRegister(storeCollector{st})
	}
	s.handler = s.allowedHost(s.cors(s.sameOrigin(s.routesMux())))
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
	first := true // the load at start is no reload (kairos_index_reloads_total, "reloads")
	if g := c.acquire(); g != nil {
		first = false
		g.Release()
	}
	err := c.ix.Reload(ctx)
	if !first {
		s.metrics.reloaded(c.name, err == nil)
	}
	return err
}

// Drain makes /readyz answer 503 so a load balancer stops sending traffic before shutdown;
// requests keep being served.
func (s *Server) Drain() { s.draining.Store(true) }

// Wait waits until no request is in its handler, or ctx ends. After an http.Server's
// Shutdown gave up on the requests still running (a chat turn waits on its LLM for minutes),
// cancel their contexts (http.Server.BaseContext) and Wait before closing what they use.
func (s *Server) Wait(ctx context.Context) error {
	// A counter polled, not a WaitGroup: a request accepted before the listener closed may
	// enter its handler while Wait runs, which a WaitGroup forbids.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.handlers.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close closes the collections' indexes. Call it after http.Server.Shutdown has returned; a
// request still running keeps its load open until it finishes.
func (s *Server) Close() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.closed = true
	s.draining.Store(true)
	var errs []error
	for _, c := range s.cols {
		errs = append(errs, c.ix.Close())
	}
	return errors.Join(errs...)
}

// acquire returns the default collection's current load with a reference held, or nil
// before its first load.
func (s *Server) acquire() *live.Load { return s.cols[0].acquire() }
