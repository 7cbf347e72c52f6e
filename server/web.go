package server

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/request"
)

// The web page of GET /: a static page (server/web) embedded in the binary, no build step and
// nothing fetched from elsewhere, that drives the public API from the browser. For a shared
// URL (/?q=...) the server also renders the first results into the HTML, so the page shows
// them before its script runs, without JavaScript, and to tools that read the DOM at load
// (chromium --dump-dom). With an API key set nothing is rendered: the page asks for the key.

//go:embed web/index.html web/app.js web/app.css
var webFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(webFiles, "web/index.html"))

// pageData fills web/index.html.
type pageData struct {
	Query  string
	Result *QueryResult // the server-rendered results of ?q=, when there are any
	Error  string       // why the ?q= search failed
}

// registerWeb adds the page and its assets to mux. They are not API endpoints: no key is
// needed to load the page, and the page's own calls carry the key.
func (s *Server) registerWeb(mux *http.ServeMux) {
	static, _ := fs.Sub(webFiles, "web")
	files := http.FileServerFS(static)
	mux.Handle("GET /{$}", s.instrument("/", false, s.handlePage))
	mux.Handle("GET /web/", s.instrument("/web/", false, func(w http.ResponseWriter, r *http.Request) {
		// Only the assets: the page's template (served as the folder's index, unrendered and
		// without the page's headers) and missing files are JSON 404s, as elsewhere.
		name := strings.TrimPrefix(r.URL.Path, "/web/")
		if st, err := fs.Stat(static, name); name == "" || name == "index.html" || err != nil || st.IsDir() {
			writeError(w, http.StatusNotFound, "no such asset: /web/"+name+" (the page is at /)")
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.StripPrefix("/web/", files).ServeHTTP(w, r)
	}))
}

// handlePage serves GET /, rendering the results of ?q= when the server needs no key.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	d := pageData{Query: r.URL.Query().Get("q")}
	if strings.TrimSpace(d.Query) != "" && s.opts.APIKey == "" {
		// The search counts against MaxInFlight like an API request; when the server is
		// busy the page still loads, and its script runs the search through the API.
		if n := s.apiInFlight.Add(1); n > int64(s.opts.MaxInFlight) {
			s.apiInFlight.Add(-1)
			d.Error = "server busy (max_in_flight): results not rendered; the page's script searches through the API"
			s.writePage(w, d)
			return
		}
		defer s.apiInFlight.Add(-1)
		v, err := queryParams(r.URL)
		var res QueryResult
		if err == nil {
			res, err = s.pageSearch(r.Context(), v)
		}
		if err != nil {
			var status int
			status, d.Error = classify(err, s.opts.Timeout.String())
			d.Error += noteFailure(w, status, err)
		} else {
			d.Result = &res
		}
	}
	s.writePage(w, d)
}

func (s *Server) writePage(w http.ResponseWriter, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		s.opts.Logger.Error("rendering the web page", "err", err)
		writeError(w, http.StatusInternalServerError, "internal error: rendering the web page failed; see the server log")
		return
	}
	w.Write(buf.Bytes())
}

// pageSearch runs the search a page URL describes, through the same parser as
// POST /v1/search and the CLI (request.Parse).
func (s *Server) pageSearch(ctx context.Context, v url.Values) (QueryResult, error) {
	qr, err := PageQuery(v)
	if err != nil {
		return QueryResult{}, err
	}
	q, err := s.opts.limits().query("", qr)
	if err != nil {
		return QueryResult{}, err
	}
	// The hits count against --max-total-hits and the in-flight budget as an API request's
	// do (admit): the page rendered 109 hits where /v1/search refused more than 10.
	hits, err := s.opts.limits().TotalHits([]rerank.Query{q})
	if err != nil {
		return QueryResult{}, err
	}
	release, err := s.budget.acquire(ctx, hits)
	if err != nil {
		return QueryResult{}, err
	}
	defer release()
	g := s.acquire()
	if g == nil {
		return QueryResult{}, &apiError{status: http.StatusServiceUnavailable, msg: "no index loaded yet"}
	}
	defer g.Release()
	if q.Mode == "" {
		q.Mode = g.Mode()
	}
	if err := filterGapError(g.Stats(), "", q); err != nil {
		return QueryResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := g.Search(ctx, q)
	if err != nil {
		return QueryResult{}, err
	}
	return queryResult(q, res), nil
}

// pageParams are the parameters of a page URL: web/app.js's fields, in their order, so that
// the page's refusal of another reads as the server's.
var pageParams = []string{"q", "mode", "time", "year", "from", "to", "rerank", "k", "date_from", "date_to", "language", "block_type"}

// PageQuery turns the parameters of a page URL into the QueryRequest the page sends to
// POST /v1/search: q, mode, k, rerank (comma-separated stages; "time" is added when a time
// need is set), time (none, recent, auto,
// year with year=, range with from= and to=), date_from and date_to. web/app.js builds the
// same request from the same parameters.
func PageQuery(v url.Values) (QueryRequest, error) {
	// A parameter the page does not read would be dropped, and a bookmark with source= or
	// min_score= would run wider than it says: refused, as GET /v1/search refuses one.
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if !slices.Contains(pageParams, name) {
			return QueryRequest{}, badRequest("unknown parameter %q: the page reads %s; GET /v1/search takes every field of the query",
				name, strings.Join(pageParams, ", "))
		}
	}
	qr := QueryRequest{Text: v.Get("q"), Mode: v.Get("mode")}
	if k := v.Get("k"); k != "" {
		n, err := strconv.Atoi(k)
		if err != nil {
			return qr, badRequest("k %q: want an integer", k)
		}
		qr.K = &n
	}
	switch t := v.Get("time"); t {
	case "", "none", "recent", "auto":
		qr.Time = t
	case "year":
		qr.Time = v.Get("year")
	case "range":
		qr.Time = v.Get("from") + ".." + v.Get("to")
	default:
		return qr, badRequest("time %q: want none, recent, year, range or auto", t)
	}
	// A time need acts only through the time stage, so the page asks for that stage
	// whenever a need is set (web/app.js does the same).
	rr := strings.Trim(v.Get("rerank"), " ,")
	if rr == "none" {
		rr = ""
	}
	if qr.Time != "" && qr.Time != "none" && !slices.Contains(strings.Split(rr, ","), "time") {
		rr = strings.Trim(rr+",time", ",")
	}
	if rr != "" {
		qr.Rerank = request.List{rr}
	}
	qr.Filters = FilterRequest{DateFrom: v.Get("date_from"), DateTo: v.Get("date_to")}
	if l := v.Get("language"); l != "" {
		qr.Filters.Language = request.List{l}
	}
	if b := v.Get("block_type"); b != "" {
		qr.Filters.BlockType = request.List{b}
	}
	return qr, nil
}
