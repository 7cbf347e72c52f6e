package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/memlimit"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
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
	indexes          serveIndexes // in the order given; the first is the default collection
	addr, apiKeyFile string
	models           modelFlags
	log              logFlags
	shutdown         time.Duration
	server           server.Options   // limits and CORS
	search           search.Options   // --verify, --ef, --binary-rescore
	time             rerank.Options   // --recent-half-life
	heap             memlimit.Options // --heap-floor, --heap-headroom: the collector's pacing
}

// cmdServe runs the HTTP retrieval service until ctx is done (SIGINT/SIGTERM in main), then
// shuts down gracefully. SIGHUP reloads the indexes, as POST /v1/admin/reload does.
func cmdServe(ctx context.Context, args []string, stdio IO) error {
	var f serveFlags
	fs := newFlags("serve", "--index LOCATION [flags]\n       kairos serve --index NAME=LOCATION --index NAME2=LOCATION2 ... [flags]\n\n"+
		"Serve retrieval over HTTP (API: GET /openapi.json). SIGHUP reloads the index.\n"+
		"Several --index NAME=LOCATION serve several collections, routed by path: /NAME/search (WikiChat's\n"+
		"--retriever_endpoint), /v1/collections/NAME/...; the first is also served by the unprefixed routes.", stdio.Stderr)
	indexer.LocationFlag(fs, &f.indexes, "required; NAME=LOCATION, repeated, serves several collections")
	fs.StringVar(&f.addr, "addr", defaultAddr, "`address` to listen on")
	f.models.register(fs, true)
	f.models.registerModelsDir(fs)
	var co chatCLIOptions
	registerServeChat(fs, &co)
	fs.StringVar(&f.apiKeyFile, "api-key-file", "", "`file` holding the API key clients send as \"Authorization: Bearer <key>\" (default: no auth)")
	f.search.VerifyFlag(fs)
	f.search.Flags(fs) // applied at every open, the reloads' included
	f.server.Flags(fs)
	f.time.Flags(fs)
	f.heap = memlimit.ServeOptions()
	f.heap.Flags(fs)
	fs.DurationVar(&f.shutdown, "shutdown-timeout", defaultShutdownTimeout, "how long shutdown waits for in-flight requests")
	f.log.register(fs, "info") // info: one access log line per request
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(f.indexes) == 0 {
		return usageErr(fs, "--index is required")
	}
	if err := checkServeIndexes(f.indexes); err != nil {
		return usageErr(fs, "--index: %v", err)
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected arguments %q", pos)
	}
	if err := rerank.CheckHalfLife(f.time.RecentHalfLifeYears); err != nil {
		return usageErr(fs, "--recent-half-life %v", err)
	}
	if err := f.heap.Validate(); err != nil {
		return usageErr(fs, "--heap-headroom must not be negative")
	}
	log, err := f.log.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	// A bad --llm-config is refused before the models and indexes are opened.
	if _, err := co.Stages.Resolve(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	key, err := readAPIKey(f.apiKeyFile, log)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Models are opened once; a reload reopens only the index.
	eo := retrievalOptions{Logger: log, Search: f.search, RecentHalfLife: f.time.RecentHalfLifeYears}
	var indexEnc chat.Encoder
	// One --model serves every collection: without it, the first index's is looked for.
	switch found := f.models.findIndexModel(ctx, f.indexes[0].loc); {
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
	// The collections' live indexes are loaded by the server's first Reload (serve), and
	// closed by the server.
	def := setIndexes(&opts, f.indexes, eo)
	opts.Logger, opts.APIKey = log, key
	if f.models.crossModel == "" {
		// WikiChat's "rerank": true asks for its LLM reranker; without a cross-encoder the
		// nearest Kairos equivalent is unavailable, so such requests are served unreranked
		// rather than refused, which would break WikiChat as a client.
		opts.WikiChatRerank = []rerank.Stage{}
		log.Info("no --cross-model: WikiChat rerank requests are served without reranking")
	}
	// POST /v1/chat retrieves through the default collection's live index, and so follows
	// its reloads as the search endpoints do.
	co.Runtime = f.models.options("", log) // a bank's model folder runs where --model does
	if !co.storeSet {
		co.StorePath = defaultChatStore(f.indexes[0].loc)
	}
	var store *chat.Store
	if opts.Chat, store, err = newServeChat(ctx, co, chat.RetrieverFunc(def.Search), def, indexEnc, log); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if store != nil {
		defer store.Close() // after serve has shut down: no turn is running
		// Session tokens are signed with the store's secret, so they outlive a restart
		// exactly as the conversations they own do.
		opts.SessionSecret = store.SessionSecret()
	}
	if opts.Chat == nil {
		log.Info("no --llm-url: POST /v1/chat answers 501")
	}
	// The collector collects at --heap-floor rather than at twice a live heap of a few MiB:
	// under load Go's default collected 37 times a second, each collection preempting the
	// searches running, and that was the tail of the latency (issue 29).
	stopHeap := paceHeap(ctx, f.heap, log)
	defer stopHeap()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return serve(ctx, f.addr, f.shutdown, opts, hup, nil)
}

// paceHeap runs memlimit.Pace until the returned function is called.
func paceHeap(ctx context.Context, o memlimit.Options, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := memlimit.Pace(ctx, o); err != nil {
			log.Warn("collector not paced", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}

// serveIndex is one --index: a location, and the collection name it is served under (""
// for the one index of the single-index form).
type serveIndex struct {
	name string
	loc  indexer.Location
}

// serveIndexes is serve's --index, repeatable (indexer.LocationFlag).
type serveIndexes []serveIndex

func (x *serveIndexes) String() string {
	if x == nil || len(*x) == 0 {
		return ""
	}
	return (*x)[0].loc.String()
}

func (x *serveIndexes) Set(v string) error {
	ix, err := parseServeIndex(v)
	if err == nil {
		*x = append(*x, ix)
	}
	return err
}

// parseServeIndex reads LOCATION or NAME=LOCATION. A value is NAME=LOCATION when the text
// before its first '=' is a valid collection name, so a directory whose name holds '=' is
// given as ./a=b.
func parseServeIndex(v string) (serveIndex, error) {
	if v == "" {
		return serveIndex{}, fmt.Errorf("empty value: want LOCATION or NAME=LOCATION")
	}
	name, rest, ok := strings.Cut(v, "=")
	if !ok || server.CheckCollectionName(name) != nil && strings.ContainsAny(name, `/\`) {
		name, rest = "", v
	} else if err := server.CheckCollectionName(name); err != nil {
		return serveIndex{}, err
	} else if rest == "" {
		return serveIndex{}, fmt.Errorf("%s=: no location", name)
	}
	loc, err := indexer.ParseLocation(rest)
	if err != nil {
		return serveIndex{}, err
	}
	return serveIndex{name: name, loc: loc}, nil
}

// checkServeIndexes accepts one LOCATION, or NAME=LOCATION values of distinct names.
func checkServeIndexes(ix []serveIndex) error {
	if len(ix) == 1 {
		return nil
	}
	seen := map[string]bool{}
	for _, x := range ix {
		if x.name == "" {
			return fmt.Errorf("%s: with several indexes, name each as NAME=LOCATION", x.loc)
		}
		if seen[x.name] {
			return fmt.Errorf("collection %q is given twice", x.name)
		}
		seen[x.name] = true
	}
	return nil
}

// setIndexes points the server at a live index per --index: one unnamed index is the
// server's Index (its collection named server.DefaultCollection), anything else a
// collection each. It returns the default collection's, which chat retrieves from. The
// indexes are not loaded yet: the server's first Reload loads them.
func setIndexes(opts *server.Options, ix []serveIndex, eo retrievalOptions) *live.Index {
	if len(ix) == 1 && ix[0].name == "" {
		opts.Index = newLiveIndex(ix[0].loc, server.DefaultCollection, eo) // named so in logs, as in metrics
		return opts.Index
	}
	for _, x := range ix {
		opts.Collections = append(opts.Collections, server.Collection{Name: x.name, Index: newLiveIndex(x.loc, x.name, eo)})
	}
	return opts.Collections[0].Index
}

// newLiveIndex returns the live index of loc with eo's models, served as the collection name
// (in its log lines; "" for none). Nothing is loaded yet.
func newLiveIndex(loc indexer.Location, name string, eo retrievalOptions) *live.Index {
	o := eo.live()
	o.Name = name
	return live.New(live.Opener(loc, o), o)
}

// serve loads the indexes, listens on addr and serves until ctx is done. Each value on hup
// reloads the indexes. ready, when set, is told the listening address (tests use port 0).
func serve(ctx context.Context, addr string, grace time.Duration, opts server.Options, hup <-chan os.Signal, ready func(net.Addr)) error {
	if len(opts.AllowedHosts) == 0 {
		opts.AllowedHosts = server.LoopbackHosts(addr)
	}
	s, err := server.New(opts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
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
	// The requests' contexts end with base: after the grace the turns still running (a chat
	// turn waits on its LLM for minutes) are cancelled, and waited for, before the deferred
	// closes of the index and the conversation store.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	hs := &http.Server{
		Handler:           s,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       timeout + 10*time.Second,
		WriteTimeout:      timeout + 10*time.Second, // chat streams extend their own deadline
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	opts.Logger.Info("serving", "addr", ln.Addr().String())
	if opts.APIKey == "" && server.LoopbackHosts(addr) == nil {
		// Anyone who reaches the port may then search, chat and reload the index.
		opts.Logger.Warn("serving beyond this machine without an API key: anyone who reaches the address may search, chat and reload (--api-key-file sets a key)", "addr", ln.Addr().String())
	}
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
				// The requests still running are cancelled and answered (a 503 saying so)
				// before their connections close: closed first, their clients got nothing.
				cancelBase()
				wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer wcancel()
				if werr := s.Wait(wctx); werr != nil {
					opts.Logger.Error("requests still running after shutdown and cancellation", "err", werr)
				}
				// Their answers leave once the handlers return; then the connections close.
				fctx, fcancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer fcancel()
				if hs.Shutdown(fctx) != nil {
					hs.Close()
				}
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
