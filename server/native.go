package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/version"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

// acquireFor returns the current load of the collection r names (the default one when
// it names none) with a reference held: a 404 for an unknown collection, a 503 before the
// collection's first load.
func (s *Server) acquireFor(r *http.Request) (*live.Load, error) {
	c, err := s.collection(r)
	if err != nil {
		return nil, err
	}
	return s.acquireIn(c)
}

// acquireIn is acquireFor of a collection already resolved.
func (s *Server) acquireIn(c *collection) (*live.Load, error) {
	g := c.acquire()
	if g == nil {
		msg := "no index loaded yet"
		if len(s.cols) > 1 {
			msg = "collection " + c.name + ": " + msg
		}
		return nil, &apiError{status: http.StatusServiceUnavailable, msg: msg}
	}
	return g, nil
}

// handleSearch serves POST /v1/search and POST /v1/collections/{collection}/search, and
// their GET twins, whose one query is in the URL's parameters (decodeSearchParams).
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c, err := s.collection(r) // an unknown collection is a 404 whatever the body
	if err != nil {
		writeErr(w, err, "")
		return
	}
	var qs []rerank.Query
	batch := false
	// The query is in one place: a GET's body or a POST's URL parameters were ignored, and the
	// search ran without the filter they held.
	switch {
	case r.Method == http.MethodGet && (r.ContentLength > 0 || len(r.TransferEncoding) > 0):
		err = badRequest("a GET search takes its query in the URL's parameters, not a body: send the body with POST")
	case r.Method != http.MethodGet && r.URL.RawQuery != "":
		err = badRequest("a POST search takes its query in the body, not the URL's parameters: send them as the body's fields, or use GET")
	case r.Method == http.MethodGet:
		var v url.Values
		if v, err = queryParams(r.URL); err == nil {
			qs, err = decodeSearchParams(v, s.opts.limits())
		}
	default:
		var body []byte
		if body, err = readBody(w, r, s.opts.MaxBodyBytes); err == nil {
			qs, batch, err = decodeSearchRequest(body, s.opts.limits())
		}
	}
	if err != nil {
		writeErr(w, err, "")
		return
	}
	g, err := s.acquireIn(c)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	defer g.Release()
	for i := range qs {
		if qs[i].Mode == "" {
			qs[i].Mode = g.Mode()
		}
		if err := filterGapError(g.Stats(), queryPath(batch, i), qs[i]); err != nil {
			writeErr(w, err, "")
			return
		}
	}
	setMode(r, batchMode(qs))
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	release, err := s.admit(ctx, w, qs)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	defer release()
	results, err := s.runBatch(ctx, g, qs)
	if err != nil {
		writeErr(w, err, s.opts.Timeout.String())
		return
	}
	resp := SearchResponse{Results: make([]QueryResult, len(qs))}
	for i, q := range qs {
		resp.Results[i] = queryResult(q, results[i])
	}
	resp.TookMS = float64(time.Since(start).Microseconds()) / 1000
	out, err := s.encodeCapped(resp, s.opts.MaxResponseBytes)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	s.writeEncoded(w, http.StatusOK, out)
}

// filterGapError refuses a query whose source or language filter names only values no
// passage of the index has (live.FilterGaps; the CLI refuses the same), listing the index's:
// its empty answer would read as "nothing relevant". path places the field in the body.
// WikiChat's API does not refuse them: its clients expect an empty answer.
func filterGapError(st search.Stats, path string, q rerank.Query) error {
	for _, g := range live.FilterGaps(st, q.Filters) {
		if g.All {
			return badRequest("%s; its %ss: %s (GET /v1/stats lists them)", g.Describe(path+g.Field), g.What, g.HaveList())
		}
	}
	return nil
}

// admit bounds a batch: its total hits against MaxTotalHits (400), then its share of
// MaxInFlightHits, waited for until ctx is done (429 with Retry-After). The release it
// returns must run after the response is written, since the response is most of the memory.
func (s *Server) admit(ctx context.Context, w http.ResponseWriter, qs []rerank.Query) (func(), error) {
	hits, err := s.opts.limits().TotalHits(qs)
	if err != nil {
		return nil, err
	}
	release, err := s.budget.acquire(ctx, hits)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		return nil, err
	}
	return release, nil
}

// runBatch runs the queries of one request on at most Options.Workers goroutines. The first
// error cancels the rest, since the request fails as a whole.
func (s *Server) runBatch(ctx context.Context, g *live.Load, qs []rerank.Query) ([]rerank.Result, error) {
	// A request whose time ran out while it waited fails as timed out here, even against an
	// engine that would not look at ctx before it finishes.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]rerank.Result, len(qs))
	if len(qs) == 1 {
		res, err := s.searchOne(ctx, g, qs[0])
		out[0] = res
		return out, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		next     = make(chan int)
	)
	workers := min(s.opts.Workers, len(qs))
	for range workers {
		wg.Go(func() {
			for i := range next {
				res, err := s.searchOne(ctx, g, qs[i])
				if err != nil {
					once.Do(func() { firstErr = &queryError{index: i, err: err}; cancel() })
					continue
				}
				out[i] = res
			}
		})
	}
feed:
	for i := range qs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return out, firstErr
}

// searchOne runs one query of a batch. A panic in the engine becomes the query's error:
// the workers run on goroutines of their own, outside instrument's recover, where a panic
// would end the process and every request in flight with it.
func (s *Server) searchOne(ctx context.Context, g *live.Load, q rerank.Query) (res rerank.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("search panic", "query", q.Text, "panic", p, "stack", string(debug.Stack()))
			res, err = rerank.Result{}, errSearchPanicked
		}
	}()
	return g.Search(ctx, q)
}

// errSearchPanicked answers a query whose search panicked: a 500 (classify's default), whose
// message, like instrument's, leaves the panic's details to the server log.
var errSearchPanicked = errors.New("the search panicked; see the server log")

// queryError says which query of a batch failed.
type queryError struct {
	index int
	err   error
}

func (e *queryError) Error() string {
	return "queries[" + strconv.Itoa(e.index) + "]: " + e.err.Error()
}
func (e *queryError) Unwrap() error { return e.err }

func queryResult(q rerank.Query, res rerank.Result) QueryResult {
	qr := QueryResult{Query: q.Text, Mode: string(q.Mode), Time: timeNeed(res.Time),
		Rerank: make([]string, len(q.Rerank)), Hits: make([]HitResult, len(res.Hits))}
	for i, st := range q.Rerank {
		qr.Rerank[i] = string(st)
	}
	for i, h := range res.Hits {
		p := h.Passage
		hr := HitResult{Rank: h.Rank, Score: h.Score, PassageID: p.ID, DocID: p.DocID,
			Title: p.Title, Section: p.Section, Text: p.Text, URL: webURL(p.URL), Date: formatTime(p.Date),
			Source: p.Source, BlockType: p.Block(), Scores: h.Scores}
		if x := h.Explain; x != nil {
			hr.Explain = &ExplainResult{Retrieval: x.Retrieval, Relevance: x.Relevance,
				Cross: x.Cross, Time: x.TimeScore, Final: x.Final, Notes: x.Notes,
				Unscored: x.Unscored, WikiChatKey: x.Key}
		}
		qr.Hits[i] = hr
	}
	return qr
}

// webURL is u when it is an absolute http(s) URL, else "": only such URLs leave the server,
// whatever an index built before ingest checked them holds (corpus.WebURL).
func webURL(u string) string {
	u, _ = corpus.WebURL(u)
	return u
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// handlePassage serves GET /v1/passages/{id}. Ids contain '#', so clients escape it (%23);
// a 404 for an id without one says so.
func (s *Server) handlePassage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" {
		writeError(w, http.StatusBadRequest, "missing passage id")
		return
	}
	g, err := s.acquireFor(r)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	defer g.Release()
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	p, err := g.Passage(ctx, id)
	if errors.Is(err, search.ErrNotFound) && !strings.Contains(id, "#") {
		// Likely curl .../passages/127#0: a client never sends a URL's fragment, so the
		// server saw "127" and the '#' went unsaid. Say how to write it.
		writeError(w, http.StatusNotFound, fmt.Sprintf(`passage %q not found; passage ids look like "%s#0", and a URL must write '#' as %%23: %s%s%%230`,
			id, id, strings.TrimSuffix(r.URL.Path, id), url.PathEscape(id)))
		return
	}
	if err != nil {
		writeErr(w, err, s.opts.Timeout.String())
		return
	}
	writeJSON(w, http.StatusOK, passageResponse(p))
}

func passageResponse(p corpus.Passage) PassageResponse {
	return PassageResponse{PassageID: p.ID, DocID: p.DocID, Title: p.Title, Section: p.Section,
		Text: p.Text, URL: webURL(p.URL), Date: formatTime(p.Date), Source: p.Source, BlockType: p.Block(), Ordinal: p.Ordinal,
		Years: yearMentions(p.Years)}
}

// handleStats serves GET /v1/stats.
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	g, err := s.acquireFor(r)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	defer g.Release()
	st := g.Stats()
	resp := StatsResponse{
		Index: IndexStats{Documents: st.Documents, Passages: st.Passages, Sources: st.Sources,
			DateFrom: formatTime(st.DateFrom), DateTo: formatTime(st.DateTo), Dense: st.Dense,
			Model: st.Model, Created: formatTime(st.Created), FormatVersion: st.Version,
			SizeBytes: st.SizeBytes, DefaultMode: string(g.Mode()), Language: st.Language, Analyzer: st.Analyzer, Languages: st.Languages,
			Outdated: st.Outdated},
		Server: s.info(g),
	}
	resp.Server.Collection = r.PathValue("collection")
	if resp.Server.Collection == "" {
		resp.Server.Collection = s.cols[0].name
	}
	if resp.Index.Sources == nil {
		resp.Index.Sources = map[string]int{}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) info(g *live.Load) ServerInfo {
	si := ServerInfo{Version: version.String(), Started: formatTime(s.started), Generation: g.Stats().Generation, Reloads: g.Reloads(),
		LoadedAt: formatTime(g.LoadedAt())}
	if s.opts.Chat != nil {
		si.Chat = &ChatInfo{Pipelines: []string{}}
		if pl, ok := s.opts.Chat.(PipelineLister); ok {
			si.Chat.Pipelines = pl.Pipelines()
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		si.GoVersion = bi.GoVersion
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" {
				si.Revision = kv.Value
			}
		}
	}
	return si
}

// batchMode labels a batch for metrics: its mode when all queries share one, else "mixed".
func batchMode(qs []rerank.Query) string {
	if len(qs) == 0 {
		return ""
	}
	m := qs[0].Mode
	for _, q := range qs[1:] {
		if q.Mode != m {
			return "mixed"
		}
	}
	return string(m)
}
