package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

const sciFactCorpus = "../../shared/data/beir-scifact/corpus.jsonl"

// sciFactPassages reads the first n SciFact abstracts as one passage each, title-prefixed
// as Kairos passages are.
func sciFactPassages(t testing.TB, n int) []corpus.Passage {
	t.Helper()
	ps, err := readSciFact(n)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func readSciFact(n int) ([]corpus.Passage, error) {
	f, err := os.Open(sciFactCorpus)
	if err != nil {
		return nil, fmt.Errorf("opening SciFact corpus (../shared must sit beside the repo): %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []corpus.Passage
	for line := 1; len(out) < n && sc.Scan(); line++ {
		var raw struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", sciFactCorpus, line, err)
		}
		out = append(out, corpus.Passage{ID: raw.ID + "#0", DocID: raw.ID, Title: raw.Title,
			Text: raw.Title + " | " + raw.Text, Source: "scifact"})
	}
	return out, sc.Err()
}

func terms(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out[w] = true
	}
	return out
}

// fakeEngine scores passages by how many distinct query terms they contain: a real, if
// crude, retriever over real passages, so handler tests check real hits.
type fakeEngine struct {
	gen      int // the generation number of the index it stands for
	passages []corpus.Passage
	terms    []map[string]bool
	dense    bool
	closed   atomic.Bool
	useAfter atomic.Int64 // searches on a closed engine: must stay 0
	// entered and hold, when set, make Search signal its start and wait, so a test can
	// reload while a request is in flight.
	entered, hold chan struct{}
	// panicOn, when set, makes Search panic on a query of that text, as an engine with a bug
	// would.
	panicOn string
	// failOn, when set, makes Search fail on a query of that text with an error that names
	// a file, as a failing disk would.
	failOn string

	mu   sync.Mutex
	seen []rerank.Query
}

func newFakeEngine(ps []corpus.Passage) *fakeEngine {
	ts := make([]map[string]bool, len(ps))
	for i, p := range ps {
		ts[i] = terms(p.Text)
	}
	return &fakeEngine{passages: ps, terms: ts}
}

func (e *fakeEngine) Close() error {
	if e.closed.Swap(true) {
		return errors.New("fake engine closed twice")
	}
	return nil
}

func (e *fakeEngine) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	if e.closed.Load() {
		e.useAfter.Add(1)
		return rerank.Result{}, errors.New("search on a closed engine")
	}
	if e.hold != nil {
		e.entered <- struct{}{}
		select {
		case <-e.hold:
		case <-ctx.Done():
		}
	}
	if err := ctx.Err(); err != nil {
		return rerank.Result{}, err
	}
	if e.failOn != "" && q.Text == e.failOn {
		return rerank.Result{}, errors.New("read /secret/index/postings-000001.kpost: input/output error")
	}
	if e.panicOn != "" && q.Text == e.panicOn {
		panic("fake engine: panic on " + q.Text)
	}
	e.mu.Lock()
	e.seen = append(e.seen, q)
	e.mu.Unlock()
	qt := terms(q.Text)
	var hits []rerank.Hit
	for i, p := range e.passages {
		if !allowed(p, q.Filters) {
			continue
		}
		n := 0
		for w := range qt {
			if e.terms[i][w] {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, rerank.Hit{Hit: search.Hit{Passage: p, Score: float64(n)}})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	k := q.K
	if k == 0 {
		k = search.DefaultK
	}
	hits = hits[:min(k, len(hits))]
	for i := range hits {
		hits[i].Rank = i + 1
		if q.Explain {
			hits[i].Explain = &rerank.Explanation{Retrieval: hits[i].Score, Relevance: hits[i].Score / float64(len(qt)),
				Final: hits[i].Score, Notes: []string{fmt.Sprintf("%d of %d query terms", int(hits[i].Score), len(qt))}}
		}
	}
	return rerank.Result{Hits: hits, Time: q.Time}, nil
}

// allowed applies f as the engines that filter by hand do (backend.Filter's Match and
// MatchBlockType), so the fake cannot read a filter otherwise than they do (it once read an
// empty source list as "none", and so hid the engines reading it as "any"). Languages are
// left to the handlers' tests: the fake's passages carry none.
func allowed(p corpus.Passage, f search.Filters) bool {
	return f.Match(p.Date, p.Source) && f.MatchBlockType(p.BlockType)
}

func (e *fakeEngine) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	for _, p := range e.passages {
		if p.ID == id {
			return p, nil
		}
	}
	return corpus.Passage{}, fmt.Errorf("passage %q: %w", id, search.ErrNotFound)
}

func (e *fakeEngine) Stats() search.Stats {
	docs := map[string]bool{}
	for _, p := range e.passages {
		docs[p.DocID] = true
	}
	return search.Stats{Generation: max(e.gen, 1), Documents: len(docs), Passages: len(e.passages),
		Sources: map[string]int{"scifact": len(e.passages)}, Dense: e.dense, Version: 1, SizeBytes: 12345}
}

// Capabilities: a dense fake serves every mode, and every fake the cross stage (its hits
// depend on neither).
func (e *fakeEngine) Capabilities() live.Capabilities {
	return live.Capabilities{Dense: e.dense, Cross: true}
}

// DocFreq counts the passages whose lower-cased words hold each word.
func (e *fakeEngine) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	out := make([]int, len(words))
	for i, w := range words {
		for _, p := range e.passages {
			if slices.Contains(strings.Fields(strings.ToLower(p.Text)), strings.ToLower(w)) {
				out[i]++
			}
		}
	}
	return out, len(e.passages), nil
}

func (e *fakeEngine) lastQueries() []rerank.Query {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]rerank.Query(nil), e.seen...)
}

// fakeLoader opens a fresh fakeEngine over the same passages on every load and remembers
// the engines it made.
type fakeLoader struct {
	gen      int // the generation number its engines report (0: 1), as an index's commits raise it
	passages []corpus.Passage
	terms    []map[string]bool // computed on first load, shared read-only by every engine
	mu       sync.Mutex
	engines  []*fakeEngine
	fail     error
}

func (l *fakeLoader) open(ctx context.Context) (live.Engine, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return nil, l.fail
	}
	if l.terms == nil {
		l.terms = newFakeEngine(l.passages).terms
	}
	e := &fakeEngine{gen: l.gen, passages: l.passages, terms: l.terms}
	l.engines = append(l.engines, e)
	return e, nil
}

// index returns a live index over l's engines, loaded by the server's first Reload.
func (l *fakeLoader) index() *live.Index { return live.New(l.open, live.Options{}) }

// engineIndex returns a live index that loads e at every load.
func engineIndex(e live.Engine) *live.Index {
	return live.New(func(context.Context) (live.Engine, error) { return e, nil }, live.Options{})
}

func (l *fakeLoader) latest() *fakeEngine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.engines[len(l.engines)-1]
}

// newTestServer builds a loaded Server over the first 500 SciFact abstracts.
func newTestServer(t testing.TB, opts Options) (*Server, *fakeLoader) {
	t.Helper()
	l := &fakeLoader{passages: sciFactPassages(t, 500)}
	opts.Index = l.index()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l
}

// do sends one request to h and returns the recorded response.
func do(h http.Handler, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error answer with Content-Type %q", ct)
	}
	return decodeErrorBody(t, w.Body.Bytes()).Error
}
