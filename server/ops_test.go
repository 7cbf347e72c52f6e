package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestAuth(t *testing.T) {
	s, _ := newTestServer(t, Options{APIKey: "s3cret"})
	search := `{"text":"malaria"}`
	tests := []struct {
		name, method, path, body, auth string
		status                         int
		msg                            string
	}{
		{"missing key", "POST", "/v1/search", search, "", 401, `missing API key: send "Authorization: Bearer <key>"`},
		{"wrong key", "POST", "/v1/search", search, "Bearer nope", 401, "invalid API key"},
		{"wrong scheme", "GET", "/v1/stats", "", "Basic czNjcmV0", 401, `unsupported authorization scheme: send "Authorization: Bearer <key>"`},
		{"wikichat needs the key too", "POST", "/search", `{"query":"a","num_blocks":1}`, "", 401, `missing API key: send "Authorization: Bearer <key>"`},
		{"reload needs the key", "POST", "/v1/admin/reload", "", "Bearer s3cre", 401, "invalid API key"},
		{"right key", "POST", "/v1/search", search, "Bearer s3cret", 200, ""},
		{"scheme is case-insensitive", "GET", "/v1/passages/4983%230", "", "bearer s3cret", 200, ""},
		{"healthz is open", "GET", "/healthz", "", "", 200, ""},
		{"readyz is open", "GET", "/readyz", "", "", 200, ""},
		{"metrics are open", "GET", "/metrics", "", "", 200, ""},
		{"openapi is open", "GET", "/openapi.json", "", "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, tt.method, tt.path, tt.body, "Authorization", tt.auth)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.msg != "" {
				wantError(t, w.Body.Bytes(), tt.msg)
				if w.Header().Get("WWW-Authenticate") != `Bearer realm="kairos"` {
					t.Errorf("WWW-Authenticate = %q", w.Header().Get("WWW-Authenticate"))
				}
			}
		})
	}
}

func TestCORS(t *testing.T) {
	off, _ := newTestServer(t, Options{})
	on, _ := newTestServer(t, Options{CORSOrigins: []string{"https://chat.example.org"}})
	anyOrigin, _ := newTestServer(t, Options{CORSOrigins: []string{"*"}})
	tests := []struct {
		name      string
		s         *Server
		method    string
		origin    string
		status    int
		allowed   string
		preflight bool
	}{
		// A POST from a page of an origin CORS does not allow is refused before it runs: the
		// browser would hide the answer, but not undo a reload or an LLM call.
		{"off by default", off, "POST", "https://chat.example.org", 403, "", false},
		{"preflight off by default", off, "OPTIONS", "https://chat.example.org", 405, "", true},
		{"allowed origin", on, "POST", "https://chat.example.org", 200, "https://chat.example.org", false},
		{"other origin", on, "POST", "https://evil.example.com", 403, "", false},
		{"any origin", anyOrigin, "POST", "https://evil.example.com", 200, "*", false},
		{"preflight", on, "OPTIONS", "https://chat.example.org", 204, "https://chat.example.org", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := []string{"Origin", tt.origin}
			if tt.preflight {
				hdr = append(hdr, "Access-Control-Request-Method", "POST")
			}
			body := `{"text":"malaria"}`
			if tt.method == "OPTIONS" {
				body = ""
			}
			w := do(tt.s, tt.method, "/v1/search", body, hdr...)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != tt.allowed {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tt.allowed)
			}
			if tt.status == 204 && !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
				t.Errorf("preflight allows headers %q", w.Header().Get("Access-Control-Allow-Headers"))
			}
			if tt.status == 403 {
				wantError(t, w.Body.Bytes(), "cross-origin request refused: origin "+tt.origin+
					" is not allowed (--cors-origins); a web page may send POST only to its own server or one that allows it")
			}
		})
	}
	if _, err := New(Options{Index: (&fakeLoader{}).index(), CORSOrigins: []string{"chat.example.org"}}); err == nil ||
		err.Error() != `server options: CORS origin "chat.example.org": want scheme://host[:port] or *` {
		t.Errorf("bad origin accepted or wrong error: %v", err)
	}
}

// TestAllowedHosts: a server that answers for the loopback names refuses a request whose Host
// is another name (a page whose name an attacker's DNS rebound to 127.0.0.1), whatever its
// Origin; one with no list answers any.
func TestAllowedHosts(t *testing.T) {
	loop, _ := newTestServer(t, Options{AllowedHosts: LoopbackHosts("127.0.0.1:8080")})
	any, _ := newTestServer(t, Options{AllowedHosts: LoopbackHosts(":8080")})
	for _, tc := range []struct {
		host      string
		loop, any int
	}{
		{"localhost:8080", 200, 200},
		{"127.0.0.1:8080", 200, 200},
		{"[::1]:8080", 200, 200},
		{"kairos.localhost", 200, 200},
		{"evil.example:8080", 403, 200},
		{"127.0.0.1.evil.example", 403, 200},
	} {
		for _, s := range []struct {
			h    http.Handler
			want int
		}{{loop, tc.loop}, {any, tc.any}} {
			req := httptest.NewRequest("GET", "/v1/search?q=malaria", nil)
			req.Host = tc.host
			req.Header.Set("Origin", "http://"+tc.host)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, req)
			if w.Code != s.want {
				t.Errorf("Host %s: %d, want %d: %s", tc.host, w.Code, s.want, w.Body)
			}
		}
	}
	for _, addr := range []string{"localhost:80", "[::1]:80", "127.0.0.2:1"} {
		if LoopbackHosts(addr) == nil {
			t.Errorf("%s is a loopback address", addr)
		}
	}
	for _, addr := range []string{":8080", "0.0.0.0:8080", "10.0.0.1:80", "example.com:80"} {
		if LoopbackHosts(addr) != nil {
			t.Errorf("%s is no loopback address", addr)
		}
	}
}

// TestSameOrigin: unsafe requests carrying an Origin are served only from the server's own
// origin (its Host, or the X-Forwarded-Host of a proxy in front) or one CORS allows, so that
// no web page elsewhere can make the server reload, or spend its LLM on /v1/chat. Clients
// that send no Origin (curl, WikiChat's Python client) and safe methods are not concerned.
func TestSameOrigin(t *testing.T) {
	off, _ := newTestServer(t, Options{})
	on, _ := newTestServer(t, Options{CORSOrigins: []string{"https://chat.example.org"}})
	tests := []struct {
		name         string
		s            *Server
		method, path string
		hdr          []string
		status       int
	}{
		{"no origin", off, "POST", "/v1/search", nil, 200},
		{"own origin", off, "POST", "/v1/search", []string{"Origin", "http://kairos.local:8080", "Host", "kairos.local:8080"}, 200},
		{"own origin, host case", off, "POST", "/v1/search", []string{"Origin", "http://Kairos.Local:8080", "Host", "kairos.local:8080"}, 200},
		{"own page behind a proxy", off, "POST", "/v1/search",
			[]string{"Origin", "https://search.example.org", "Host", "127.0.0.1:8080", "X-Forwarded-Host", "search.example.org"}, 200},
		{"own page behind two proxies", off, "POST", "/v1/search",
			[]string{"Origin", "https://search.example.org", "Host", "127.0.0.1:8080", "X-Forwarded-Host", "search.example.org, edge.internal"}, 200},
		{"fetch metadata says same origin", off, "POST", "/v1/search",
			[]string{"Origin", "https://search.example.org", "Host", "127.0.0.1:8080", "Sec-Fetch-Site", "same-origin"}, 200},
		{"other port", off, "POST", "/v1/search", []string{"Origin", "http://kairos.local:9999", "Host", "kairos.local:8080"}, 403},
		{"other host behind a proxy", off, "POST", "/v1/search",
			[]string{"Origin", "https://evil.example.com", "Host", "127.0.0.1:8080", "X-Forwarded-Host", "search.example.org"}, 403},
		{"cross-site despite fetch metadata", off, "POST", "/v1/search",
			[]string{"Origin", "https://evil.example.com", "Sec-Fetch-Site", "cross-site"}, 403},
		{"opaque origin", off, "POST", "/v1/search", []string{"Origin", "null"}, 403},
		{"reload from another origin", off, "POST", "/v1/admin/reload", []string{"Origin", "https://evil.example.com"}, 403},
		{"chat from another origin", off, "POST", "/v1/chat", []string{"Origin", "https://evil.example.com"}, 403},
		{"chat delete from another origin", off, "DELETE", "/v1/chat/abc", []string{"Origin", "https://evil.example.com"}, 403},
		{"wikichat from another origin", on, "POST", "/search", []string{"Origin", "https://evil.example.com"}, 403},
		{"allowed origin reloads", on, "POST", "/v1/admin/reload", []string{"Origin", "https://chat.example.org"}, 200},
		{"GET from another origin", off, "GET", "/v1/stats", []string{"Origin", "https://evil.example.com"}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			switch tc.path {
			case "/v1/search":
				body = `{"text":"malaria"}`
			case "/search":
				body = `{"query":"malaria","num_blocks":1}`
			case "/v1/chat":
				body = `{"messages":[{"role":"user","content":"hi"}]}`
			}
			var r io.Reader
			if body != "" {
				r = strings.NewReader(body)
			}
			req := httptest.NewRequest(tc.method, tc.path, r)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				if tc.hdr[i] == "Host" {
					req.Host = tc.hdr[i+1]
				} else {
					req.Header.Set(tc.hdr[i], tc.hdr[i+1])
				}
			}
			w := httptest.NewRecorder()
			tc.s.ServeHTTP(w, req)
			if (w.Code == 403) != (tc.status == 403) || tc.status == 200 && w.Code != 200 {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if w.Code == 403 && !strings.Contains(errorOf(t, w), "cross-origin request refused") {
				t.Errorf("403 for another reason: %s", w.Body)
			}
		})
	}
}

func TestRoutingErrors(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct {
		name, method, path string
		status             int
		msg, allow         string
	}{
		{"unknown path", "GET", "/v3/stats", 404, "no such endpoint: /v3/stats (see /openapi.json)", ""},
		{"unknown collection", "POST", "/v3/search", 404, `no such collection "v3" (collections: default)`, ""},
		{"unknown collection, v1", "POST", "/v1/collections/v3/search", 404, `no such collection "v3" (collections: default)`, ""},
		{"wrong method on wikichat 2.0", "GET", "/v2/search", 405, "method GET not allowed on /v2/search (allowed: POST)", "POST"},
		{"wrong method", "DELETE", "/v1/search", 405, "method DELETE not allowed on /v1/search (allowed: POST, GET)", "POST, GET"},
		{"wrong method on wikichat", "PUT", "/search", 405, "method PUT not allowed on /search (allowed: POST, GET)", "POST, GET"},
		{"wrong method on stats", "POST", "/v1/stats", 405, "method POST not allowed on /v1/stats (allowed: GET)", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, tt.method, tt.path, "")
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			wantError(t, w.Body.Bytes(), tt.msg)
			if w.Header().Get("Allow") != tt.allow {
				t.Errorf("Allow = %q", w.Header().Get("Allow"))
			}
		})
	}
}

func TestHealthAndReadiness(t *testing.T) {
	l := &fakeLoader{passages: sciFactPassages(t, 50)}
	s, err := New(Options{Index: l.index()})
	if err != nil {
		t.Fatal(err)
	}
	check := func(path string, status int, want string) {
		t.Helper()
		w := do(s, "GET", path, "")
		if w.Code != status || strings.TrimSpace(w.Body.String()) != want {
			t.Errorf("%s: %d %s, want %d %s", path, w.Code, w.Body, status, want)
		}
	}
	check("/healthz", 200, `{"status":"ok"}`)
	check("/readyz", 503, `{"status":"not ready","reason":"no index loaded yet"}`)
	check("/v1/stats", 503, `{"error":"no index loaded yet","detail":"no index loaded yet"}`)
	if w := do(s, "POST", "/v1/search", `{"text":"a"}`); w.Code != 503 {
		t.Errorf("search before load: %d", w.Code)
	}
	l.fail = errors.New("manifest.json: checksum mismatch")
	w := do(s, "POST", "/v1/admin/reload", "")
	if w.Code != 500 {
		t.Fatalf("failed reload: %d %s", w.Code, w.Body)
	}
	// No index was loaded yet: the first load failed, nothing was being reloaded.
	wantError(t, w.Body.Bytes(), "loading index: manifest.json: checksum mismatch")
	l.fail = nil
	if w := do(s, "POST", "/v1/admin/reload", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"reloaded","generation":1,"passages":50`) {
		t.Fatalf("reload: %d %s", w.Code, w.Body)
	}
	check("/readyz", 200, `{"status":"ready","generation":1,"passages":50}`)
	l.fail = errors.New("manifest.json: checksum mismatch")
	if w := do(s, "POST", "/v1/admin/reload", ""); w.Code != 500 {
		t.Fatalf("failed reload: %d %s", w.Code, w.Body)
	} else {
		wantError(t, w.Body.Bytes(), "reloading index: manifest.json: checksum mismatch")
	}
	l.fail = nil
	check("/readyz", 200, `{"status":"ready","generation":1,"passages":50}`)
	// A reload counts as a reload, not as a generation: the index's generation number moves
	// only when the index commits a new one (kairos stats reports the same number).
	if w := do(s, "POST", "/v1/admin/reload", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"reloaded","generation":1,"reloads":1,"passages":50`) {
		t.Fatalf("reload of the same generation: %d %s", w.Code, w.Body)
	}
	l.gen = 3 // an update and a compaction committed since
	if w := do(s, "POST", "/v1/admin/reload", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"reloaded","generation":3,"reloads":2,"passages":50`) {
		t.Fatalf("reload onto generation 3: %d %s", w.Code, w.Body)
	}
	check("/readyz", 200, `{"status":"ready","generation":3,"reloads":2,"passages":50}`)
	for _, tc := range []struct{ path, want string }{
		{"/v1/stats", `"generation":3,"reloads":2,`},
		{"/v1/collections", `"generation":3,"reloads":2,`},
		{"/metrics", `kairos_index_generation{collection="default"} 3`},
		{"/metrics", `kairos_index_reloads_total{collection="default",result="ok"} 2`},
	} {
		if w := do(s, "GET", tc.path, ""); !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %s, want %s", tc.path, w.Body, tc.want)
		}
	}
	s.Drain()
	check("/readyz", 503, `{"status":"not ready","reason":"shutting down"}`)
	check("/healthz", 200, `{"status":"ok"}`)
	if w := do(s, "POST", "/v1/search", `{"text":"malaria"}`); w.Code != 200 {
		t.Errorf("draining server must still serve: %d", w.Code)
	}
	s.Close()
	if !l.latest().closed.Load() {
		t.Error("Close left the engine open")
	}
	if err := s.Reload(context.Background()); err == nil || err.Error() != "reloading index: server is closed" {
		t.Errorf("reload after close: %v", err)
	}
}

func TestMetrics(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	for range 3 {
		do(s, "POST", "/v1/search", `{"text":"malaria"}`)
	}
	do(s, "POST", "/v1/search", `{"text":""}`)
	do(s, "POST", "/search", `{"query":"malaria","num_blocks":2}`)
	do(s, "GET", "/v1/passages/4983%230", "")
	w := do(s, "GET", "/metrics", "")
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %q", w.Code, w.Header().Get("Content-Type"))
	}
	body := w.Body.String()
	// Label names come in alphabetical order, as the Prometheus client writes them.
	for _, want := range []string{
		`kairos_http_requests_total{code="200",endpoint="/v1/search",mode="bm25"} 3`,
		`kairos_http_requests_total{code="400",endpoint="/v1/search",mode=""} 1`,
		`kairos_http_requests_total{code="200",endpoint="/search",mode="bm25"} 1`,
		`kairos_http_request_duration_seconds_count{endpoint="/v1/search",mode="bm25"} 3`,
		`kairos_http_request_duration_seconds_bucket{endpoint="/v1/search",mode="bm25",le="+Inf"} 3`,
		`kairos_http_requests_total{code="200",endpoint="/v1/passages/{id}",mode=""} 1`,
		`kairos_index_passages{collection="default"} 500`,
		`kairos_index_size_bytes{collection="default"} 12345`,
		`kairos_index_generation{collection="default"} 1`,
		`kairos_index_reloads_total{collection="default",result="ok"} 0`, // the load at start is none
		`kairos_index_reloads_total{collection="default",result="error"} 0`,
		`kairos_http_requests_in_flight 1`, // the /metrics request itself
		"# TYPE kairos_http_request_duration_seconds histogram",
		"# TYPE go_goroutines gauge",                 // the Go runtime's series
		"# TYPE process_resident_memory_bytes gauge", // and the process's
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// Every sample line is name{labels} value, and buckets never decrease.
	sample := regexp.MustCompile(`^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? ([0-9.e+-]+|NaN|\+Inf)$`)
	var last float64 = -1
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if !sample.MatchString(line) {
			t.Errorf("malformed sample line %q", line)
		}
		if strings.HasPrefix(line, "kairos_http_request_duration_seconds_bucket{") && strings.Contains(line, `endpoint="/v1/search",mode="bm25",le=`) {
			var v float64
			json.Unmarshal([]byte(line[strings.LastIndex(line, " ")+1:]), &v)
			if v < last {
				t.Errorf("bucket decreases at %q", line)
			}
			last = v
		}
	}
}

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	w := do(s, "GET", "/openapi.json", "")
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Security  []map[string][]string `json:"security"`
			Responses map[string]any        `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	mustJSON(t, w.Body.Bytes(), &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			documented[strings.ToUpper(m)+" "+p] = true
		}
	}
	for _, rt := range s.routes() {
		key := rt.method + " " + strings.ReplaceAll(rt.path, "...}", "}")
		op, ok := doc.Paths[strings.ReplaceAll(rt.path, "...}", "}")][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("route %s is not in openapi.json", key)
			continue
		}
		delete(documented, key)
		if rt.api != (len(op.Security) > 0) {
			t.Errorf("%s: api %v but documented security %v", key, rt.api, op.Security)
		}
		if _, ok := op.Responses["200"]; !ok {
			t.Errorf("%s: no 200 response documented", key)
		}
		// sameOrigin refuses a cross-origin page's unsafe request; readBody, which answers
		// 413, refuses a compressed body.
		if _, ok := op.Responses["403"]; !safeMethod(rt.method) && !ok {
			t.Errorf("%s: no 403 (cross-origin refused) documented", key)
		}
		if _, ok := op.Responses["415"]; op.Responses["413"] != nil && !ok {
			t.Errorf("%s: no 415 (Content-Encoding) documented", key)
		}
	}
	for key := range documented {
		t.Errorf("openapi.json documents %s, which is no route", key)
	}
	for _, ref := range regexp.MustCompile(`"#/components/schemas/([A-Za-z0-9]+)"`).FindAllStringSubmatch(w.Body.String(), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok {
			t.Errorf("dangling $ref %s", ref[1])
		}
	}
}

func TestPanicBecomes500(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	h := s.instrument("/boom", false, func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	w := do(h, "GET", "/boom", "")
	if w.Code != 500 {
		t.Fatalf("status %d", w.Code)
	}
	wantError(t, w.Body.Bytes(), "internal error: the handler panicked; see the server log")
}

// TestBatchQueryPanicBecomes500: a panic in the search of one query answers that request
// 500 with the usual JSON error, on the batch workers' goroutines as on the handler's, and
// the server keeps serving. Without the recover in searchOne it ends the test binary.
func TestBatchQueryPanicBecomes500(t *testing.T) {
	s, l := newTestServer(t, Options{Workers: 2})
	l.latest().panicOn = "boom"
	tests := []struct{ name, path, body, msg string }{
		{"v1 single", "/v1/search", `{"text":"boom"}`, "internal error: the search panicked; see the server log"},
		{"v1 batch first", "/v1/search", `{"queries":[{"text":"boom"},{"text":"malaria"},{"text":"cancer"}]}`,
			"internal error: queries[0]: the search panicked; see the server log"},
		{"v1 batch last", "/v1/search", `{"queries":[{"text":"malaria"},{"text":"cancer"},{"text":"boom"}]}`,
			"internal error: queries[2]: the search panicked; see the server log"},
		{"wikichat batch", "/search", `{"query":["malaria","boom"],"num_blocks":2}`,
			"internal error: queries[1]: the search panicked; see the server log"},
		{"wikichat 2.0 batch", "/v2/search", `{"query":["boom","malaria"],"num_blocks":2}`,
			"internal error: queries[0]: the search panicked; see the server log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { postWantError(t, s, tc.path, tc.body, http.StatusInternalServerError, tc.msg) })
	}
	if w := do(s, "POST", "/v1/search", `{"queries":[{"text":"malaria"},{"text":"cancer"}]}`); w.Code != http.StatusOK {
		t.Errorf("after the panics: status %d: %s", w.Code, w.Body)
	}
}

// TestInternalErrorTextStaysInTheLog: a search that fails on the server's side answers 500
// with the request's id and without the error's text, which names a file; the access log
// holds it.
func TestInternalErrorTextStaysInTheLog(t *testing.T) {
	var buf bytes.Buffer
	s, l := newTestServer(t, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	l.latest().failOn = "boom"
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/search", `{"text":"boom"}`},
		{"POST", "/search", `{"query":["boom"],"num_blocks":2}`},
		{"GET", "/?q=boom", ""},
	} {
		buf.Reset()
		w := do(s, tc.method, tc.path, tc.body, "X-Request-Id", "req-7")
		if strings.Contains(w.Body.String(), "/secret") || !strings.Contains(w.Body.String(), "see the server log (request req-7)") {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, w.Code, w.Body)
		}
		if !strings.Contains(buf.String(), `"err":"read /secret/index/postings-000001.kpost: input/output error"`) {
			t.Errorf("%s %s: the access log lacks the error: %s", tc.method, tc.path, buf.String())
		}
	}
}

func TestTimeout(t *testing.T) {
	s, l := newTestServer(t, Options{Timeout: 50 * time.Millisecond})
	e := l.latest()
	e.entered, e.hold = make(chan struct{}, 1), make(chan struct{})
	w := do(s, "POST", "/v1/search", `{"text":"malaria"}`)
	if w.Code != http.StatusGatewayTimeout || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q: %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	wantError(t, w.Body.Bytes(), "request timed out after 50ms (timeout)")
}

func TestAccessLog(t *testing.T) {
	var buf bytes.Buffer
	s, _ := newTestServer(t, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	buf.Reset() // drop the load message
	w := do(s, "POST", "/v1/search", `{"text":"malaria"}`, "X-Request-Id", "req-42")
	if w.Header().Get("X-Request-Id") != "req-42" {
		t.Errorf("X-Request-Id not echoed: %q", w.Header().Get("X-Request-Id"))
	}
	var rec map[string]any
	mustJSON(t, buf.Bytes(), &rec)
	for k, want := range map[string]any{"msg": "request", "method": "POST", "path": "/v1/search",
		"endpoint": "/v1/search", "mode": "bm25", "status": float64(200), "request_id": "req-42"} {
		if rec[k] != want {
			t.Errorf("log %s = %v, want %v", k, rec[k], want)
		}
	}
	if rec["bytes"].(float64) != float64(w.Body.Len()) {
		t.Errorf("log bytes %v, body %d", rec["bytes"], w.Body.Len())
	}
	if w := do(s, "GET", "/healthz", ""); len(w.Header().Get("X-Request-Id")) != 16 {
		t.Errorf("generated request id %q", w.Header().Get("X-Request-Id"))
	}
}

func TestMaxInFlight(t *testing.T) {
	s, l := newTestServer(t, Options{MaxInFlight: 1})
	e := l.latest()
	e.entered, e.hold = make(chan struct{}), make(chan struct{})
	first := make(chan int)
	go func() { first <- do(s, "POST", "/v1/search", `{"text":"malaria"}`).Code }()
	<-e.entered
	w := do(s, "POST", "/search", `{"query":"malaria","num_blocks":1}`)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("second request: %d %q", w.Code, w.Header().Get("Retry-After"))
	}
	wantError(t, w.Body.Bytes(), "server busy: 1 requests in flight (max_in_flight); retry later")
	if w := do(s, "GET", "/readyz", ""); w.Code != 200 {
		t.Errorf("readyz counted against the limit: %d", w.Code)
	}
	close(e.hold)
	if code := <-first; code != 200 {
		t.Fatalf("first request: %d", code)
	}
	e.hold = nil
	if w := do(s, "POST", "/v1/search", `{"text":"malaria"}`); w.Code != 200 {
		t.Errorf("after the first finished: %d", w.Code)
	}
}
