package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// route is one endpoint. The OpenAPI test walks this table, so a route cannot go undocumented.
type route struct {
	method, path string
	api          bool // an API endpoint: needs the API key when one is set, counts in MaxInFlight
	handler      http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"POST", "/v1/search", true, s.handleSearch},
		{"GET", "/v1/search", true, s.handleSearch}, // one query in the URL's parameters
		{"GET", "/v1/passages/{id...}", true, s.handlePassage},
		{"GET", "/v1/stats", true, s.handleStats},
		{"POST", "/v1/chat", true, s.handleChat},
		{"GET", "/v1/chat/{id}", true, s.handleChatGet},
		{"DELETE", "/v1/chat/{id}", true, s.handleChatDelete},
		{"POST", "/v1/admin/reload", true, s.handleReload},
		{"POST", "/search", true, s.handleWikiChat},
		{"GET", "/search", true, s.handleWikiChat}, // WikiChat 1.0 sends GET with a JSON body
		{"POST", "/v2/search", true, s.handleWikiChatV2},
		// Several indexes behind one server: WikiChat's corpus_id endpoints, registered once
		// per collection by name, and the native API under /v1/collections/{collection}.
		{"POST", "/{collection}/search", true, s.handleWikiChat},
		{"GET", "/{collection}/search", true, s.handleWikiChat},
		{"POST", "/{collection}/v2/search", true, s.handleWikiChatV2},
		{"GET", "/v1/collections", true, s.handleCollections},
		{"POST", "/v1/collections/{collection}/search", true, s.handleSearch},
		{"GET", "/v1/collections/{collection}/search", true, s.handleSearch},
		{"GET", "/v1/collections/{collection}/passages/{id...}", true, s.handlePassage},
		{"GET", "/v1/collections/{collection}/stats", true, s.handleStats},
		{"POST", "/v1/collections/{collection}/admin/reload", true, s.handleReload},
		{"GET", "/healthz", false, s.handleHealthz},
		{"GET", "/readyz", false, s.handleReadyz},
		{"GET", "/readyz/{collection}", false, s.handleCollectionReadyz},
		{"GET", "/metrics", false, s.handleMetrics},
		{"GET", "/openapi.json", false, s.handleOpenAPI},
	}
}

// routesMux registers every route, plus a JSON 405 for a known path with another method and
// a JSON 404 for unknown paths (the stdlib's plain-text answers would break JSON clients).
func (s *Server) routesMux() *http.ServeMux {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range s.routes() {
		label := strings.ReplaceAll(rt.path, "...}", "}") // as in openapi.json
		for _, p := range s.expand(rt.path) {
			h := rt.handler
			if p.collection != "" {
				h = func(w http.ResponseWriter, r *http.Request) {
					r.SetPathValue("collection", p.collection)
					rt.handler(w, r)
				}
			}
			mux.Handle(rt.method+" "+p.path, s.instrument(label, rt.api, h))
			if allowed[p.path] == nil {
				paths = append(paths, p.path)
			}
			allowed[p.path] = append(allowed[p.path], rt.method)
		}
	}
	for _, p := range paths {
		methods := strings.Join(allowed[p], ", ")
		mux.Handle(p, s.instrument(strings.ReplaceAll(p, "...}", "}"), false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", methods)
			writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path+" (allowed: "+methods+")")
		}))
	}
	s.registerWeb(mux)
	mux.Handle("/", s.instrument("other", false, func(w http.ResponseWriter, r *http.Request) {
		if m := collectionPath.FindStringSubmatch(r.URL.Path); m != nil {
			writeErr(w, s.noSuchCollection(m[1]), "")
			return
		}
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path+" (see /openapi.json)")
	}))
	return mux
}

// collectionPath matches the paths of the per-collection WikiChat routes, whatever the name.
var collectionPath = regexp.MustCompile(`^/([^/]+)/(?:v2/)?search$`)

// routePath is a route's path as registered, and the collection it serves when the path
// names one literally.
type routePath struct{ path, collection string }

// expand registers a top-level /{collection}/ route once per collection, by name: as a
// wildcard it would overlap /web/ and /v2/search in ways net/http refuses.
func (s *Server) expand(path string) []routePath {
	rest, ok := strings.CutPrefix(path, "/{collection}/")
	if !ok {
		return []routePath{{path: path}}
	}
	out := make([]routePath, len(s.cols))
	for i, c := range s.cols {
		out[i] = routePath{path: "/" + c.name + "/" + rest, collection: c.name}
	}
	return out
}

// reqInfo carries what a handler learns about a request back to the access log and metrics,
// and the request's id to the handler.
type reqInfo struct{ mode, id string }

// requestID is the id of the request (X-Request-Id), for a log line an answer points to.
func requestID(r *http.Request) string {
	if info, ok := r.Context().Value(infoKey{}).(*reqInfo); ok {
		return info.id
	}
	return ""
}

type infoKey struct{}

func setMode(r *http.Request, mode string) {
	if info, ok := r.Context().Value(infoKey{}).(*reqInfo); ok {
		info.mode = mode
	}
}

// instrument wraps a handler with request ids, authentication, panic recovery, metrics and
// the access log.
func (s *Server) instrument(endpoint string, api bool, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handlers.Add(1)
		defer s.handlers.Add(-1)
		start := time.Now()
		info := &reqInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		rid := r.Header.Get("X-Request-Id")
		if rid == "" || len(rid) > 64 {
			rid = newRequestID()
		}
		w.Header().Set("X-Request-Id", rid)
		info.id = rid
		sw := &statusWriter{ResponseWriter: w, rid: rid, draining: &s.draining}
		s.metrics.inflight.Add(1)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.opts.Logger.Error("handler panic", "endpoint", endpoint, "request_id", rid,
					"panic", p, "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeError(sw, http.StatusInternalServerError, "internal error: the handler panicked; see the server log")
				}
			}
			s.metrics.inflight.Add(-1)
			if sw.status == 0 {
				sw.status = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.observe(endpoint, info.mode, sw.status, d)
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.String("endpoint", endpoint), slog.String("mode", info.mode),
				slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes),
				slog.Duration("duration", d), slog.String("remote", r.RemoteAddr),
				slog.String("request_id", rid)}
			level := slog.LevelInfo
			if sw.failure != nil {
				level, attrs = slog.LevelError, append(attrs, slog.String("err", sw.failure.Error()))
			}
			s.opts.Logger.LogAttrs(r.Context(), level, "request", attrs...)
		}()
		if api {
			if !s.authorized(sw, r) {
				return
			}
			if n := s.apiInFlight.Add(1); n > int64(s.opts.MaxInFlight) {
				s.apiInFlight.Add(-1)
				sw.Header().Set("Retry-After", "1")
				writeError(sw, http.StatusTooManyRequests, "server busy: "+strconv.Itoa(s.opts.MaxInFlight)+
					" requests in flight (max_in_flight); retry later")
				return
			}
			defer s.apiInFlight.Add(-1)
		}
		h(sw, r)
	})
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// authorized checks the Bearer API key in constant time and answers 401 when it fails.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.APIKey == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(h, " ")
	var msg string
	switch {
	case h == "":
		msg = `missing API key: send "Authorization: Bearer <key>"`
	case !strings.EqualFold(scheme, "Bearer"):
		msg = `unsupported authorization scheme: send "Authorization: Bearer <key>"`
	case subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.opts.APIKey)) != 1:
		msg = "invalid API key"
	default:
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="kairos"`)
	writeError(w, http.StatusUnauthorized, msg)
	return false
}

// originSet is --cors-origins as cors and sameOrigin both read it (one rule, so that the
// pages CORS lets read an answer are the pages allowed to send the request).
type originSet struct {
	any     bool // "*"
	origins map[string]bool
}

func newOriginSet(origins []string) originSet {
	o := originSet{origins: make(map[string]bool, len(origins))}
	for _, x := range origins {
		o.any = o.any || x == "*"
		o.origins[x] = true
	}
	return o
}

func (o originSet) allows(origin string) bool { return o.any || o.origins[origin] }

// cors answers preflights and adds CORS headers for the configured origins; with none
// configured it adds nothing, so browsers refuse cross-origin calls.
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.opts.CORSOrigins) == 0 {
		return next
	}
	allowed := newOriginSet(s.opts.CORSOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && allowed.allows(origin) {
			h := w.Header()
			if allowed.any {
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Add("Vary", "Origin")
			}
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Request-Id, "+SessionHeader)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, "+SessionHeader)
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses, 403, a request of an unsafe method (POST, DELETE, ...) sent by a web
// page of an origin that CORS does not allow. CORS only keeps such a page from reading the
// answer: the request itself still runs, and a page anywhere could make the server reload
// (POST /v1/admin/reload) or spend the operator's LLM (POST /v1/chat) from a visitor's
// browser. Browsers send Origin on every cross-origin POST; clients that send none (curl,
// WikiChat's Python client, other servers) are not concerned, nor are safe methods.
//
// The server's own origin is allowed, so that its page (GET /) can search: Origin's host is
// the request's Host, or, behind a reverse proxy that rewrites Host, its X-Forwarded-Host. A
// page cannot forge either (a cross-origin request with an extra header needs a preflight,
// which CORS refuses), nor Sec-Fetch-Site, which browsers set: same-origin is accepted too.
func (s *Server) sameOrigin(next http.Handler) http.Handler {
	allowed := newOriginSet(s.opts.CORSOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || safeMethod(r.Method) || allowed.allows(origin) ||
			r.Header.Get("Sec-Fetch-Site") == "same-origin" || ownOrigin(r, origin) {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusForbidden, "cross-origin request refused: origin "+origin+
			" is not allowed (--cors-origins); a web page may send "+r.Method+" only to its own server or one that allows it")
	})
}

// allowedHost refuses, 403, a request whose Host names a host that Options.AllowedHosts does
// not list (any, when it is empty).
func (s *Server) allowedHost(next http.Handler) http.Handler {
	if len(s.opts.AllowedHosts) == 0 {
		return next
	}
	allowed := map[string]bool{}
	for _, h := range s.opts.AllowedHosts {
		allowed[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host = strings.ToLower(strings.Trim(host, "[]")); allowed[host] || allowed["localhost"] && isLoopbackName(host) {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusForbidden, "host "+strconv.Quote(r.Host)+" is not one this server answers for (--allowed-hosts): a name other than the server's may be a DNS rebinding")
	})
}

// LoopbackHosts are the names a server listening on addr answers for by default: localhost and
// the loopback addresses when addr's host is a loopback address or localhost, else none (any).
func LoopbackHosts(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopbackName(strings.ToLower(host)) {
		return nil
	}
	return []string{"localhost", "127.0.0.1", "::1"}
}

// isLoopbackName says whether host is localhost, a name under .localhost (RFC 6761) or a
// loopback address.
func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// safeMethod reports whether m changes nothing on the server (RFC 9110, 9.2.1): such requests
// need no origin check, and preflights are CORS's to answer.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions || m == http.MethodTrace
}

// ownOrigin reports whether origin is the server's own, as the browser addressed it: its host
// and port are the request's Host, or the first X-Forwarded-Host, the one the client named to
// the first proxy. The scheme is not compared: behind a proxy the server cannot know it.
func ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (a sandboxed page, a file) or not an origin at all
	}
	if fwd := r.Header.Get("X-Forwarded-Host"); fwd != "" {
		first, _, _ := strings.Cut(fwd, ",")
		if sameHost(u, strings.TrimSpace(first)) {
			return true
		}
	}
	return sameHost(u, r.Host)
}

// sameHost compares origin u's host and port with a Host header's, a default port written or
// not, case aside.
func sameHost(u *url.URL, host string) bool {
	if host == "" {
		return false
	}
	h, err := url.Parse("//" + host)
	if err != nil {
		return false
	}
	port := func(p, scheme string) string {
		if p != "" {
			return p
		}
		if scheme == "https" {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(u.Hostname(), h.Hostname()) && port(u.Port(), u.Scheme) == port(h.Port(), u.Scheme)
}

// statusWriter records the status and size of a response. Unwrap lets
// http.ResponseController reach Flush and SetWriteDeadline for streaming.
type statusWriter struct {
	http.ResponseWriter
	status  int
	bytes   int64
	rid     string // the request's id
	failure error  // the server's own failure that the response answered 500 (noteFailure)
	// draining is the server's: a request cancelled while it is set was stopped by the
	// shutdown, not by its client (writeErr).
	draining *atomic.Bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
