package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// addrWriter reads `kairos serve --log-format json`'s log and hands on the address of its
// "serving" line, so a test can talk to a real serve listening on port 0.
type addrWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
}

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, line := range bytes.Split(p, []byte("\n")) {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "serving" {
			w.addr <- rec.Addr
		}
	}
	return len(p), nil
}

func (w *addrWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// startServeCmd runs `kairos serve` with args on a port of its choosing (JSON info logs) until
// the test ends, then checks that it shut down cleanly. It returns the server's base URL.
func startServeCmd(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logw := &addrWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	args = append(args, "--addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "info")
	go func() { done <- cmdServe(ctx, args, IO{Stdout: io.Discard, Stderr: logw}) }()
	select {
	case a := <-logw.addr:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return "http://" + a
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\n%s", err, logw)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("serve did not start:\n%s", logw)
	}
	return ""
}

// TestServeCollections runs `kairos serve --index sci=DIR --index faq=DIR` over a postings
// index of SciFact's head and a bleve index of the COVID FAQ, and drives every per-collection
// route: WikiChat's three client shapes under /NAME/, the native API under
// /v1/collections/NAME/, health, reload and metrics per collection, and the 404 of an unknown
// collection. Each collection must answer from its own index only.
func TestServeCollections(t *testing.T) {
	dir := t.TempDir()
	sciIn := filepath.Join(dir, "scifact.jsonl")
	wikiChatCorpus(t, sciIn)
	sci, faq := filepath.Join(dir, "sci"), filepath.Join(dir, "faq")
	if _, _, err := runCLI(t, "index", "--quiet", "--lexical", "postings", "--input", sciIn, "--source", "scifact", "--index", sci); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "index", "--quiet", "--lexical", "bleve", "--source", "faq",
		"--input", coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv"), "--index", faq); err != nil {
		t.Fatal(err)
	}
	base := startServeCmd(t, "--index", "sci="+sci, "--index", "faq="+faq)
	do := func(method, path, body string) (int, map[string]any, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		return resp.StatusCode, m, b
	}
	// sources are the block_metadata sources of a WikiChat 2.1 answer, and the first block's doc id.
	wikichat := func(path, query string) (sources map[string]int, first string) {
		t.Helper()
		code, _, b := do("POST", path, `{"query": ["`+query+`"], "num_blocks": 5}`)
		var out []struct {
			Results []struct {
				BlockMetadata map[string]any `json:"block_metadata"`
			} `json:"results"`
		}
		if code != 200 || json.Unmarshal(b, &out) != nil || len(out) != 1 || len(out[0].Results) == 0 {
			t.Fatalf("POST %s %q: %d %s", path, query, code, b)
		}
		sources = map[string]int{}
		for _, r := range out[0].Results {
			sources[r.BlockMetadata["source"].(string)]++
		}
		return sources, out[0].Results[0].BlockMetadata["doc_id"].(string)
	}
	const covid = "how long does the coronavirus survive on surfaces"
	for _, tt := range []struct{ path, query, source, first string }{
		{"/sci/search", newbornQuery, "scifact", newbornDoc},
		{"/search", newbornQuery, "scifact", newbornDoc}, // the first collection is the default
		{"/faq/search", covid, "faq", ""},
		{"/faq/search", newbornQuery, "faq", ""}, // a SciFact query still finds only FAQ passages
		{"/sci/search", covid, "scifact", ""},
	} {
		src, first := wikichat(tt.path, tt.query)
		if len(src) != 1 || src[tt.source] == 0 {
			t.Errorf("%s %q: sources %v, want only %s", tt.path, tt.query, src, tt.source)
		}
		if tt.first != "" && first != tt.first {
			t.Errorf("%s %q: first doc %s, want %s", tt.path, tt.query, first, tt.first)
		}
	}
	// WikiChat 1.0 (GET, evi_num) and 2.0 (parallel lists) on a named collection.
	code, v1, b := do("GET", "/sci/search", `{"query": "`+newbornQuery+`", "evi_num": 3}`)
	if ids, _ := v1["passage_ids"].([]any); code != 200 || len(ids) != 3 || !strings.HasPrefix(ids[0].(string), newbornDoc+"#") {
		t.Errorf("GET /sci/search (1.0): %d %s", code, b)
	}
	code, _, b = do("POST", "/faq/v2/search", `{"query": ["`+covid+`"], "num_blocks": 4}`)
	var v20 []map[string][]any
	if code != 200 || json.Unmarshal(b, &v20) != nil || len(v20) != 1 || len(v20[0]["text"]) != 4 {
		t.Errorf("POST /faq/v2/search (2.0): %d %s", code, b)
	}
	// The native API under /v1/collections/NAME/.
	code, _, b = do("POST", "/v1/collections/faq/search", `{"text": "`+covid+`", "k": 3}`)
	var native struct {
		Results []struct {
			Hits []map[string]any `json:"hits"`
		} `json:"results"`
	}
	if code != 200 || json.Unmarshal(b, &native) != nil || len(native.Results) != 1 || len(native.Results[0].Hits) != 3 ||
		!strings.Contains(string(b), `"source":"faq"`) || strings.Contains(string(b), `"source":"scifact"`) {
		t.Errorf("POST /v1/collections/faq/search: %d %s", code, b)
	}
	if code, p, b := do("GET", "/v1/collections/sci/passages/"+newbornDoc+"%230", ""); code != 200 || p["doc_id"] != newbornDoc {
		t.Errorf("sci passage: %d %s", code, b)
	}
	if code, _, b := do("GET", "/v1/collections/faq/passages/"+newbornDoc+"%230", ""); code != 404 {
		t.Errorf("a SciFact passage looked up in faq: %d %s, want 404", code, b)
	}
	stats := func(path string) (passages float64, collection any) {
		t.Helper()
		code, st, b := do("GET", path, "")
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, b)
		}
		return st["index"].(map[string]any)["passages"].(float64), st["server"].(map[string]any)["collection"]
	}
	sciN, name := stats("/v1/collections/sci/stats")
	if name != "sci" {
		t.Errorf("sci stats name the collection %v", name)
	}
	faqN, name := stats("/v1/collections/faq/stats")
	if name != "faq" || faqN == sciN {
		t.Errorf("faq stats: %v passages, collection %v (sci has %v)", faqN, name, sciN)
	}
	if n, name := stats("/v1/stats"); n != sciN || name != "sci" {
		t.Errorf("/v1/stats: %v passages of %v, want the default collection sci's %v", n, name, sciN)
	}
	// An unknown collection is a JSON 404 that names the known ones, on every route kind.
	for _, r := range []struct{ method, path string }{
		{"POST", "/nope/search"}, {"GET", "/nope/search"}, {"POST", "/nope/v2/search"},
		{"POST", "/v1/collections/nope/search"}, {"GET", "/v1/collections/nope/stats"},
		{"GET", "/v1/collections/nope/passages/1%230"}, {"POST", "/v1/collections/nope/admin/reload"},
		{"GET", "/readyz/nope"},
	} {
		code, m, b := do(r.method, r.path, `{"query": "x", "num_blocks": 1}`)
		if msg, _ := m["error"].(string); code != 404 || msg != `no such collection "nope" (collections: sci, faq)` {
			t.Errorf("%s %s: %d %s", r.method, r.path, code, b)
		}
	}
	// Health and reload per collection.
	// reloads reads each collection's reloads since start (/v1/collections); the generation
	// numbers stay 1, since nothing is committed to the indexes meanwhile.
	reloads := func() map[string]float64 {
		t.Helper()
		code, m, b := do("GET", "/v1/collections", "")
		cs, _ := m["collections"].([]any)
		if code != 200 || len(cs) != 2 {
			t.Fatalf("/v1/collections: %d %s", code, b)
		}
		out := map[string]float64{}
		for i, c := range cs {
			c := c.(map[string]any)
			if c["status"] != "ready" || c["default"] != (i == 0) || c["passages"].(float64) == 0 {
				t.Errorf("/v1/collections[%d]: %v", i, c)
			}
			if c["generation"] != 1.0 {
				t.Errorf("/v1/collections[%d]: generation %v, want 1", i, c["generation"])
			}
			out[c["name"].(string)] = c["reloads"].(float64)
		}
		return out
	}
	if g := reloads(); g["sci"] != 0 || g["faq"] != 0 {
		t.Fatalf("reloads %v", g)
	}
	if code, m, b := do("GET", "/readyz/faq", ""); code != 200 || m["collection"] != "faq" || m["passages"] != faqN {
		t.Errorf("/readyz/faq: %d %s", code, b)
	}
	if code, m, b := do("GET", "/readyz", ""); code != 200 || len(m["collections"].([]any)) != 2 {
		t.Errorf("/readyz: %d %s", code, b)
	}
	if code, m, b := do("POST", "/v1/collections/faq/admin/reload", ""); code != 200 || m["collection"] != "faq" || m["generation"] != 1.0 || m["reloads"] != 1.0 {
		t.Errorf("reload faq: %d %s", code, b)
	}
	if g := reloads(); g["sci"] != 0 || g["faq"] != 1 {
		t.Errorf("after reloading faq: reloads %v, want sci 0, faq 1", g)
	}
	if code, m, b := do("POST", "/v1/admin/reload", ""); code != 200 || len(m["collections"].([]any)) != 2 {
		t.Errorf("reload all: %d %s", code, b)
	}
	if g := reloads(); g["sci"] != 1 || g["faq"] != 2 {
		t.Errorf("after reloading all: reloads %v, want sci 1, faq 2", g)
	}
	if _, first := wikichat("/faq/search", covid); first == "" {
		t.Error("faq serves nothing after its reloads")
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`kairos_index_generation{collection="faq"} 1`, `kairos_index_generation{collection="sci"} 1`,
		`kairos_index_reloads_total{collection="faq",result="ok"} 2`, `kairos_index_reloads_total{collection="sci",result="ok"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestServeIndexFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--index", "a=" + dir, "--index", "a=" + dir}, `--index: collection "a" is given twice`},
		{[]string{"--index", dir, "--index", "b=" + dir}, "--index: " + dir + ": with several indexes, name each as NAME=LOCATION"},
		{[]string{"--index", "v1=" + dir}, `invalid value "v1=` + dir + `" for flag -index: collection name "v1" is a path of the API itself`},
		{[]string{"--index", "a b=" + dir}, `invalid value "a b=` + dir + `" for flag -index: collection name "a b": want 1-64 letters`},
		{[]string{"--index", "a="}, `invalid value "a=" for flag -index: a=: no location`},
	} {
		err := cmdServe(context.Background(), append(tt.args, "--addr", "127.0.0.1:0"), IO{Stdout: io.Discard, Stderr: io.Discard})
		if err == nil || !strings.Contains(err.Error(), tt.msg) || !errors.Is(err, ErrUsage) {
			t.Errorf("%q: %v, want a usage error with %s", tt.args, err, tt.msg)
		}
	}
}
