package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
	"github.com/kairos-rag/kairos/server"
)

// Defaults of serve's own flags (the library's register theirs: server.Options.Flags, ...).
const (
	defaultAddr            = "127.0.0.1:8080"
	defaultShutdownTimeout = 30 * time.Second
)

// serveFlags are the flags of `kairos serve`.
type serveFlags struct {
	index, addr, apiKeyFile string
	models                  modelFlags
	log                     logFlags
	shutdown                time.Duration
	server                  server.Options // limits and CORS
	search                  search.Options // --verify
	time                    rerank.Options // --recent-half-life
}

// cmdServe runs the HTTP retrieval service until ctx is done (SIGINT/SIGTERM in main), then
// shuts down gracefully. SIGHUP reloads the index directory, as POST /v1/admin/reload does.
func cmdServe(ctx context.Context, args []string, stdio IO) error {
	var f serveFlags
	fs := newFlags("serve", "--index DIR [flags]\n\nServe retrieval over HTTP (API: GET /openapi.json). SIGHUP reloads the index.", stdio.Stderr)
	fs.StringVar(&f.index, "index", "", "index `directory` to serve (required)")
	fs.StringVar(&f.addr, "addr", defaultAddr, "`address` to listen on")
	f.models.register(fs, true)
	f.models.registerModelsDir(fs)
	var co chatCLIOptions
	registerServeChat(fs, &co)
	fs.StringVar(&f.apiKeyFile, "api-key-file", "", "`file` holding the API key clients send as \"Authorization: Bearer <key>\" (default: no auth)")
	f.search.VerifyFlag(fs)
	f.server.Flags(fs)
	f.time.Flags(fs)
	fs.DurationVar(&f.shutdown, "shutdown-timeout", defaultShutdownTimeout, "how long shutdown waits for in-flight requests")
	f.log.register(fs, "info") // info: one access log line per request
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if f.index == "" {
		return usageErr(fs, "--index is required")
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected arguments %q", pos)
	}
	if err := rerank.CheckHalfLife(f.time.RecentHalfLifeYears); err != nil {
		return usageErr(fs, "--recent-half-life %v", err)
	}
	log, err := f.log.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	key, err := readAPIKey(f.apiKeyFile, log)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Models are opened once; a reload reopens only the index directory.
	eo := retrievalOptions{Index: f.index, Logger: log, Search: f.search, RecentHalfLife: f.time.RecentHalfLifeYears}
	var indexEnc chat.Encoder
	switch found := f.models.findIndexModel(ctx, f.index); {
	case found.dir != "":
		log.Info("model found without --model", "model", f.models.model, "how", found.note)
	case found.dense:
		log.Warn("dense index served with BM25 only (no --model)", "why", found.note)
	}
	if f.models.model != "" {
		enc, err := openEncoder(ctx, &f.models, log)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer enc.Close()
		eo.Search.Encoder, indexEnc = enc, bankEncoder(enc)
	}
	if f.models.crossModel != "" {
		ce, err := embed.OpenCrossEncoder(ctx, f.models.options(f.models.crossModel, log))
		if err != nil {
			return fmt.Errorf("serve: opening cross-encoder: %w", err)
		}
		defer ce.Close()
		eo.Scorer = ce
	}
	opts := f.server
	opts.Loader = func(ctx context.Context) (server.Engine, io.Closer, error) {
		return openEngine(ctx, eo)
	}
	opts.Logger, opts.APIKey = log, key
	if f.models.crossModel == "" {
		// WikiChat's "rerank": true asks for its LLM reranker; without a cross-encoder the
		// nearest Kairos equivalent is unavailable, so such requests are served unreranked
		// rather than refused, which would break WikiChat as a client.
		opts.WikiChatRerank = []rerank.Stage{}
		log.Info("no --cross-model: WikiChat rerank requests are served without reranking")
	}
	// POST /v1/chat retrieves through the live server, which exists only once serve has
	// created it; requests arrive after that.
	var live *server.Server
	co.Runtime = f.models.options("", log) // a bank's model folder runs where --model does
	if !co.storeSet {
		co.StorePath = defaultChatStore(f.index)
	}
	var store *chat.Store
	if opts.Chat, store, err = newServeChat(ctx, co, serverRetriever(&live), indexEnc, log); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if store != nil {
		defer store.Close() // after serve has shut down: no turn is running
	}
	if opts.Chat == nil {
		log.Info("no --llm-url: POST /v1/chat answers 501")
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return serve(ctx, f.addr, f.shutdown, opts, hup, nil, func(s *server.Server) { live = s })
}

// openEngine opens the index directory for the server. The server calls it at start and on
// every reload; it opens the live generation afresh, and the returned Closer releases it.
func openEngine(ctx context.Context, o retrievalOptions) (server.Engine, io.Closer, error) {
	r, err := openRetrieval(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	return &indexEngine{ix: r.ix, re: r.re, dense: r.ix.Stats().Dense && o.Search.Encoder != nil, cross: r.hasCross}, r, nil
}

// indexEngine adapts an opened index to server.Engine. It turns requests the index cannot
// answer into server.ErrInvalid (400) before they reach search or rerank, whose errors
// would otherwise read as server faults (500).
type indexEngine struct {
	ix    *search.Index
	re    *rerank.Retriever
	dense bool // dense and hybrid modes can be served (vectors and an encoder)
	cross bool // the cross stage can be served (a cross-encoder)
}

func (e *indexEngine) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	if q.Mode != search.ModeBM25 && q.Mode != "" && !e.dense {
		return rerank.Result{}, fmt.Errorf("%w: mode %s needs an index with dense vectors and the server's --model", server.ErrInvalid, q.Mode)
	}
	for _, st := range q.Rerank {
		if st == rerank.StageCross && !e.cross {
			return rerank.Result{}, fmt.Errorf("%w: rerank cross: no cross-encoder is configured", server.ErrInvalid)
		}
	}
	if err := q.Time.Validate(); err != nil {
		return rerank.Result{}, fmt.Errorf("%w: %v", server.ErrInvalid, err)
	}
	return e.re.Search(ctx, q)
}

func (e *indexEngine) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	p, err := e.ix.Passage(ctx, id)
	if errors.Is(err, search.ErrNotFound) {
		return p, fmt.Errorf("passage %q: %w", id, server.ErrNotFound)
	}
	return p, err
}

func (e *indexEngine) Stats(ctx context.Context) (search.Stats, error) { return e.ix.Stats(), nil }

// serve loads the index, listens on addr and serves until ctx is done. Each value on hup
// reloads the index. ready, when set, is told the listening address (tests use port 0).
func serve(ctx context.Context, addr string, grace time.Duration, opts server.Options, hup <-chan os.Signal, ready func(net.Addr), created func(*server.Server)) error {
	s, err := server.New(opts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if created != nil {
		created(s)
	}
	defer s.Close()
	if err := s.Reload(ctx); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = server.DefaultTimeout
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       timeout + 10*time.Second,
		WriteTimeout:      timeout + 10*time.Second, // chat streams extend their own deadline
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	opts.Logger.Info("serving", "addr", ln.Addr().String())
	if ready != nil {
		ready(ln.Addr())
	}
	for {
		select {
		case <-hup:
			opts.Logger.Info("SIGHUP: reloading index")
			if err := s.Reload(ctx); err != nil {
				opts.Logger.Error("reload failed", "err", err)
			}
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
			opts.Logger.Info("shutting down: finishing in-flight requests", "grace", grace)
			s.Drain()
			sctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				return fmt.Errorf("serve: shutting down: %w", err)
			}
			opts.Logger.Info("stopped")
			return nil
		}
	}
}

// readAPIKey reads the key from path ("" means no key). It warns when others may read it.
func readAPIKey(path string, log *slog.Logger) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading API key: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("API key file %s is empty", path)
	}
	if strings.ContainsAny(key, " \t\r\n") {
		return "", fmt.Errorf("API key file %s: the key must be one line without spaces", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("API key file is readable by other users", "file", path, "mode", fi.Mode().Perm().String())
	}
	return key, nil
}
