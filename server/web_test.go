package server

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/rerank/request"
)

func TestPageQuery(t *testing.T) {
	tests := []struct {
		params string
		want   QueryRequest
		rerank string // the JSON of Rerank
		err    string
	}{
		{params: "q=vitamin+D", want: QueryRequest{Text: "vitamin D"}},
		{params: "q=x&mode=hybrid&k=5", want: QueryRequest{Text: "x", Mode: "hybrid", K: request.Int(5)}},
		{params: "q=x&time=none&rerank=cross", want: QueryRequest{Text: "x", Time: "none"}, rerank: `"cross"`},
		{params: "q=x&time=auto", want: QueryRequest{Text: "x", Time: "auto"}, rerank: `"time"`},
		{params: "q=x&time=recent&rerank=cross", want: QueryRequest{Text: "x", Time: "recent"}, rerank: `"cross,time"`},
		{params: "q=x&time=year&year=1994&rerank=time", want: QueryRequest{Text: "x", Time: "1994"}, rerank: `"time"`},
		{params: "q=x&time=range&from=1811&to=1827", want: QueryRequest{Text: "x", Time: "1811..1827"}, rerank: `"time"`},
		{params: "q=x&rerank=none", want: QueryRequest{Text: "x"}},
		{params: "q=x&date_from=2020-01-01", want: QueryRequest{Text: "x", Filters: FilterRequest{DateFrom: "2020-01-01"}}},
		{params: "q=x&language=de&block_type=table", want: QueryRequest{Text: "x", Filters: FilterRequest{Language: request.List{"de"}, BlockType: request.List{"table"}}}},
		{params: "q=x&language=&block_type=", want: QueryRequest{Text: "x"}},
		{params: "q=x&k=ten", err: `k "ten": want an integer`},
		{params: "q=x&time=soon", err: `time "soon": want none, recent, year, range or auto`},
		{params: "q=x&source=faq", err: `unknown parameter "source": the page reads q, mode, time, year, from, to, rerank, k, date_from, date_to, language, block_type; GET /v1/search takes every field of the query`},
	}
	for _, tc := range tests {
		v, _ := url.ParseQuery(tc.params)
		got, err := PageQuery(v)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.params, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.params, err)
			continue
		}
		if r, _ := json.Marshal(got.Rerank); tc.rerank != "" && string(r) != "["+tc.rerank+"]" || tc.rerank == "" && got.Rerank != nil {
			t.Errorf("%s: rerank %s, want %s", tc.params, got.Rerank, tc.rerank)
		}
		got.Rerank, tc.want.Rerank = nil, nil
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.want)
		if string(g) != string(w) {
			t.Errorf("%s: %s, want %s", tc.params, g, w)
		}
	}
}

// FuzzPageQuery: any page URL gives a request or an error, and a request passes or fails the
// API's own validation without panicking.
func FuzzPageQuery(f *testing.F) {
	for _, s := range []string{"q=x&time=range&from=1&to=2", "q=x&k=-1&rerank=time,time", "q=%ff&time=year&year=", "rerank=,,"} {
		f.Add(s)
	}
	o := Options{Index: (&fakeLoader{}).index()}
	o.SetDefaults()
	l := o.limits()
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		qr, err := PageQuery(v)
		if err != nil {
			return
		}
		l.query("", qr)
	})
}

// GET / renders the results of a shared URL into the page, escaped, and the same hits as
// POST /v1/search; the assets are served from the binary.
func TestPage(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	api := do(s, "POST", "/v1/search", `{"text": "vitamin D bone density", "k": 5}`)
	var sr SearchResponse
	if err := json.Unmarshal(api.Body.Bytes(), &sr); err != nil || len(sr.Results[0].Hits) == 0 {
		t.Fatalf("search: %d %s", api.Code, api.Body)
	}
	w := do(s, "GET", "/?q=vitamin+D+bone+density&k=5", "")
	page := w.Body.String()
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if n := strings.Count(page, `<li class="hit" data-passage=`); n != len(sr.Results[0].Hits) {
		t.Errorf("page renders %d hits, the API has %d", n, len(sr.Results[0].Hits))
	}
	at := 0
	for _, h := range sr.Results[0].Hits {
		title := `<h3 class="title">` + templateEscape(h.Title) + `</h3>`
		i := strings.Index(page[at:], title)
		if i < 0 {
			t.Fatalf("page lacks %s after offset %d", title, at)
		}
		at += i + len(title)
	}
	if !strings.Contains(page, `value="vitamin D bone density"`) {
		t.Error("the query box does not hold the query")
	}

	w = do(s, "GET", "/?q=x&time=soon", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `time &#34;soon&#34;: want none, recent, year, range or auto`) {
		t.Errorf("a bad URL: %d, want the error in the page", w.Code)
	}
	w = do(s, "GET", "/?q=%3Cscript%3Ealert(1)%3C/script%3E", "")
	if strings.Contains(w.Body.String(), "<script>alert") {
		t.Error("the query is not escaped")
	}
	for path, ctype := range map[string]string{"/web/app.js": "text/javascript", "/web/app.css": "text/css"} {
		w := do(s, "GET", path, "")
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), ctype) || w.Body.Len() < 1000 {
			t.Errorf("%s: %d %q, %d bytes", path, w.Code, w.Header().Get("Content-Type"), w.Body.Len())
		}
	}
	for _, path := range []string{"/web/missing.js", "/web/", "/web/index.html"} {
		// The template is no asset: served as the folder's index it was the page unrendered.
		if w := do(s, "GET", path, ""); w.Code != 404 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") || strings.Contains(w.Body.String(), "{{") {
			t.Errorf("%s: %d %q %q, want a JSON 404", path, w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
	}
}

// The page's search counts against --max-total-hits as the API's does: it rendered 109 hits
// where /v1/search refused more than 10.
func TestPageHitLimits(t *testing.T) {
	s, _ := newTestServer(t, Options{MaxTotalHits: 10})
	api := do(s, "GET", "/v1/search?q=vitamin+D&k=50", "")
	w := do(s, "GET", "/?q=vitamin+D&k=50", "")
	if api.Code != 400 || strings.Contains(w.Body.String(), `class="hit"`) || !strings.Contains(w.Body.String(), "over the limit of 10") {
		t.Errorf("k 50 against a limit of 10: API %d, page %d with hits %v", api.Code, w.Code, strings.Contains(w.Body.String(), `class="hit"`))
	}
	if w := do(s, "GET", "/?q=vitamin+D&k=5", ""); !strings.Contains(w.Body.String(), `class="hit"`) {
		t.Error("k 5 within the limit rendered no hits")
	}
}

// A busy server still serves the page, without rendering results.
func TestPageBusy(t *testing.T) {
	s, _ := newTestServer(t, Options{MaxInFlight: 2})
	s.apiInFlight.Store(2)
	w := do(s, "GET", "/?q=vitamin+D", "")
	if w.Code != 200 || strings.Contains(w.Body.String(), `class="hit"`) || !strings.Contains(w.Body.String(), "server busy (max_in_flight)") {
		t.Errorf("busy: %d %s", w.Code, w.Body)
	}
	if n := s.apiInFlight.Load(); n != 2 {
		t.Errorf("in flight %d after the page, want 2", n)
	}
}

// With an API key the page loads without it (it asks for the key) but renders no results,
// which would bypass the key.
func TestPageWithAPIKey(t *testing.T) {
	s, _ := newTestServer(t, Options{APIKey: "sekret"})
	w := do(s, "GET", "/?q=vitamin+D", "")
	if w.Code != 200 || strings.Contains(w.Body.String(), `class="hit"`) || !strings.Contains(w.Body.String(), `id="key-form"`) {
		t.Errorf("GET / with a key set: %d, hits rendered: %v", w.Code, strings.Contains(w.Body.String(), `class="hit"`))
	}
	if w := do(s, "GET", "/v1/stats", ""); w.Code != 401 {
		t.Errorf("stats without the key: %d", w.Code)
	}
}

func templateEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// The page's script reads the parameters PageQuery reads, no more and no fewer, and refuses
// another as PageQuery does: its search would otherwise replace the server's refusal with a
// wider one.
func TestPageParamsAreTheScripts(t *testing.T) {
	js, err := webFiles.ReadFile("web/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const fields = \[([^\]]*)\];`).FindSubmatch(js)
	if m == nil {
		t.Fatal("app.js has no `const fields = [...]`")
	}
	var fields []string
	for _, f := range strings.Split(string(m[1]), ",") {
		fields = append(fields, strings.Trim(strings.TrimSpace(f), `"`))
	}
	if !slices.Equal(fields, pageParams) {
		t.Errorf("app.js fields %v, PageQuery's %v (in the same order: the refusals list them)", fields, pageParams)
	}
	if !strings.Contains(string(js), `'unknown parameter "' + k + '": the page reads ' + fields.join(", ") + "; GET /v1/search takes every field of the query"`) {
		t.Error("app.js does not refuse an unknown parameter as PageQuery does")
	}
}
