package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
	"github.com/kairos-rag/kairos/server"
)

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	tests := []struct {
		name  string
		args  []string
		usage bool
		msg   string
	}{
		{"no index", []string{"--addr", "127.0.0.1:0"}, true, "serve: --index is required: usage error (see 'kairos serve -h')"},
		{"unknown flag", []string{"--index", dir, "--port", "1"}, true, "serve: flag provided but not defined: -port: usage error (see 'kairos serve -h')"},
		{"stray argument", []string{"--index", dir, "extra"}, true, `serve: unexpected arguments ["extra"]: usage error (see 'kairos serve -h')`},
		{"bad log level", []string{"--index", dir, "--log-level", "loud"}, true, `serve: --log-level "loud": want debug, info, warn or error: usage error (see 'kairos serve -h')`},
		{"bad timeout", []string{"--index", dir, "--timeout", "soon"}, true, `serve: invalid value "soon" for flag -timeout: parse error: usage error (see 'kairos serve -h')`},
		{"missing key file", []string{"--index", dir, "--api-key-file", filepath.Join(dir, "nokey")}, false,
			"serve: reading API key: open " + filepath.Join(dir, "nokey") + ": no such file or directory"},
		{"empty key file", []string{"--index", dir, "--api-key-file", empty}, false, "serve: API key file " + empty + " is empty"},
		{"not a model folder", []string{"--index", dir, "--model", dir}, false,
			"serve: opening model: opening encoder: " + dir + ": not a model folder: no config.json or model file; a model folder holds config.json, tokenizer.json and model.onnx, or a static model's files; kairos models list shows the pulled ones, kairos models pull NAME downloads one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := cmdServe(context.Background(), tt.args, IO{Stdout: io.Discard, Stderr: &stderr})
			if err == nil || err.Error() != tt.msg {
				t.Fatalf("err = %v, want %s", err, tt.msg)
			}
			if errors.Is(err, ErrUsage) != tt.usage {
				t.Errorf("usage error = %v", errors.Is(err, ErrUsage))
			}
		})
	}
}

// holdEngine serves the first SciFact abstract for every query; while hold is set, Search
// waits on it, so a test can shut down with a request in flight.
type holdEngine struct {
	p       corpus.Passage
	entered chan struct{}
	hold    chan struct{}
	closed  atomic.Bool
}

func (e *holdEngine) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	if e.hold != nil && strings.Contains(q.Text, "slow") {
		e.entered <- struct{}{}
		<-e.hold
	}
	return rerank.Result{Hits: []rerank.Hit{{Hit: search.Hit{Passage: e.p, Score: 1, Rank: 1}}}}, nil
}

func (e *holdEngine) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	return corpus.Passage{}, fmt.Errorf("passage %q: %w", id, search.ErrNotFound)
}

func (e *holdEngine) Stats() search.Stats {
	return search.Stats{Generation: 1, Documents: 1, Passages: 1}
}

func (e *holdEngine) Capabilities() live.Capabilities { return live.Capabilities{} }

func (e *holdEngine) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	return make([]int, len(words)), 1, nil
}

func (e *holdEngine) Close() error { e.closed.Store(true); return nil }

func firstSciFact(t *testing.T) corpus.Passage {
	f, err := os.Open("../../../shared/data/beir-scifact/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	var raw struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	return corpus.Passage{ID: raw.ID + "#0", DocID: raw.ID, Title: raw.Title, Text: raw.Title + " | " + raw.Text}
}

// TestServeLifecycle starts serve on a free port, reloads on a HUP, and cancels the context
// with a request in flight: the request must complete and serve must return nil.
func TestServeLifecycle(t *testing.T) {
	p := firstSciFact(t)
	var engines []*holdEngine
	loads := make(chan struct{}, 10)
	opts := server.Options{
		Logger: slog.New(slog.DiscardHandler),
		Index: live.New(func(ctx context.Context) (live.Engine, error) {
			e := &holdEngine{p: p, entered: make(chan struct{}), hold: make(chan struct{})}
			engines = append(engines, e)
			loads <- struct{}{}
			return e, nil
		}, live.Options{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", 5*time.Second, opts, hup, func(a net.Addr) { addrc <- a })
	}()
	base := "http://" + (<-addrc).String()
	<-loads

	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"generation":1`) {
		t.Fatalf("readyz: %d %s", code, body)
	}
	hup <- syscall.SIGHUP
	<-loads
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, body := get("/readyz"); strings.Contains(body, `"generation":1,"reloads":1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reload")
		}
	}
	// The server publishes the new engine before it releases the old one, so the close can
	// trail /readyz by a scheduling delay.
	for deadline := time.Now().Add(5 * time.Second); !engines[0].closed.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("first engine still open 5 s after the reload")
		}
	}

	slow := make(chan int)
	go func() {
		resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(`{"text":"slow query"}`))
		if err != nil {
			slow <- -1
			return
		}
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	<-engines[1].entered
	cancel()
	select {
	case err := <-done:
		t.Fatalf("serve returned (%v) with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(engines[1].hold)
	if code := <-slow; code != 200 {
		t.Errorf("in-flight request got %d during shutdown", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if !engines[1].closed.Load() {
		t.Error("engine left open after shutdown")
	}
}

// buildIndex builds opts into a new index at dir (indexer.Index.Build).
func buildIndex(t *testing.T, dir string, opts indexer.Options) {
	t.Helper()
	ix, err := indexer.Open(t.Context(), indexer.Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Build(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
}

// openLive opens the live index at loc (as --index reads it) with no models, until the test
// ends.
func openLive(t *testing.T, loc string) *live.Index {
	t.Helper()
	l, err := indexer.ParseLocation(loc)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := live.Open(t.Context(), l, live.Options{})
	if err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func writeSciFactHead(t *testing.T, path string, n int) {
	f, err := os.Open("../../../shared/data/beir-scifact/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		out.Write(sc.Bytes())
		out.WriteByte('\n')
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServeDenseIndexWithoutModel serves a dense index whose model folder is gone (no
// --model, none found): the live index serves what it can. A query naming no mode runs bm25
// (it was defaulted to hybrid from the index's vectors alone, and every such query answered
// 400), a query asking for hybrid is refused naming --model, and the stats say bm25.
func TestServeDenseIndexWithoutModel(t *testing.T) {
	model := filepath.Join(t.TempDir(), "static-st")
	if err := os.CopyFS(model, os.DirFS(coreShared(t, "models/synthetic/static-st"))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "idx")
	in := filepath.Join(t.TempDir(), "sf100.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), in, 100)
	if _, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", dir, "--model", model); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(model); err != nil {
		t.Fatal(err)
	}
	base := startServeCmd(t, "--index", dir, "--models-dir", t.TempDir(), "--chat-store", "")
	tests := []struct {
		body   string
		status int
		want   string
	}{
		{`{"text":"cerebral white matter diffusion tensor newborn","k":3}`, 200, `"mode":"bm25"`},
		{`{"text":"cerebral white matter diffusion tensor newborn","k":3,"mode":"bm25"}`, 200, `"passage_id":"4983#0"`},
		{`{"text":"cerebral white matter","mode":"hybrid"}`, 400, `mode hybrid is not supported: it needs the index's query encoder, and none was given (--model DIR)`},
	}
	for _, tc := range tests {
		resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.body, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	resp, err := http.Get(base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"dense":true`) || !strings.Contains(string(b), `"default_mode":"bm25"`) {
		t.Errorf("stats: %s, want a dense index served in bm25 by default", b)
	}
}

// TestGenerationMeansOneThing: "generation" is the index's generation number everywhere
// (kairos stats, serve's log, /readyz, /v1/stats, /v1/collections, /metrics), and the count
// of reloads is "reloads". An index updated once is at generation 2 before serve ever
// reloads it; serve said 1 and counted its reloads as generations.
func TestGenerationMeansOneThing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	in := filepath.Join(t.TempDir(), "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), in, 60)
	more := filepath.Join(t.TempDir(), "sf.jsonl") // the same name: the same source, 20 more abstracts
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), more, 80)
	if _, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "index", "--quiet", "--update", "--input", more, "--index", dir); err != nil {
		t.Fatal(err)
	}
	if out, _, err := runCLI(t, "stats", "--index", dir); err != nil || !strings.Contains(out, "generation 2)") {
		t.Fatalf("kairos stats: %v\n%s", err, out)
	}
	base := startServeCmd(t, "--index", dir, "--chat-store", "")
	get := func(method, path string) string {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	check := func(when string, gen, reloads int) {
		t.Helper()
		for _, tc := range []struct{ path, want string }{
			{"/readyz", fmt.Sprintf(`"generation":%d`, gen)},
			{"/v1/stats", fmt.Sprintf(`"generation":%d,"reloads":%d,`, gen, reloads)},
			{"/v1/collections", fmt.Sprintf(`"generation":%d,"reloads":%d,`, gen, reloads)},
			{"/metrics", fmt.Sprintf("kairos_index_generation{collection=\"default\"} %d\n", gen)},
			{"/metrics", fmt.Sprintf("kairos_index_reloads_total{collection=\"default\",result=\"ok\"} %d\n", reloads)},
		} {
			if body := get("GET", tc.path); !strings.Contains(body, tc.want) {
				t.Errorf("%s: %s: %.300s, want %s", when, tc.path, body, tc.want)
			}
		}
	}
	check("at start", 2, 0)
	if body := get("POST", "/v1/admin/reload"); !strings.Contains(body, `"generation":2,"reloads":1`) {
		t.Errorf("reload of the same generation: %s", body)
	}
	check("after a reload", 2, 1)
	if _, _, err := runCLI(t, "delete", "--index", dir, "--doc-id", "4983"); err != nil {
		t.Fatal(err)
	}
	if body := get("POST", "/v1/admin/reload"); !strings.Contains(body, `"generation":3,"reloads":2`) {
		t.Errorf("reload onto the delete's generation: %s", body)
	}
	check("after a delete and a reload", 3, 2)
}

// blockingChatter is a chat service whose turn waits for its context to end, then takes a
// while more, as a turn saving after its LLM call failed would.
type blockingChatter struct {
	started chan struct{}
	ended   atomic.Bool
}

func (b *blockingChatter) Chat(ctx context.Context, _ server.ChatRequest, _ *server.ChatStream) (server.ChatResponse, error) {
	close(b.started)
	<-ctx.Done()
	time.Sleep(50 * time.Millisecond)
	b.ended.Store(true)
	return server.ChatResponse{}, ctx.Err()
}

// TestServeShutdownWaitsForCancelledTurns: a turn still running when the shutdown's grace ends
// is cancelled and has ended when serve returns, before what it uses (the index, the
// conversation store) is closed.
func TestServeShutdownWaitsForCancelledTurns(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	ix := newLiveIndex(indexer.Location{Dir: webIndex(t)}, "", retrievalOptions{Logger: log})
	chatter := &blockingChatter{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", 100*time.Millisecond, server.Options{Logger: log, Index: ix, Chat: chatter}, nil, func(a net.Addr) { addrc <- a })
	}()
	base := "http://" + (<-addrc).String()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Post(base+"/v1/chat", "application/json", strings.NewReader(`{"message":"hi"}`))
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- resp.Status + " " + string(b)
	}()
	select {
	case <-chatter.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the chat turn did not start")
	}
	cancel()
	err := <-done
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("serve: %v, want the shutdown's deadline", err)
	}
	if !chatter.ended.Load() {
		t.Error("serve returned while a chat turn was still running")
	}
	// The client of the cancelled turn is answered, not cut off: it got no answer at all.
	if got := <-answer; !strings.HasPrefix(got, "503 ") || !strings.Contains(got, "shutting down") {
		t.Errorf("the cancelled turn's client got %q, want a 503 saying the server is shutting down", got)
	}
}

// Serving beyond the machine without an API key is warned of: anyone who reaches the address
// may search, chat and reload the index. On a loopback address it is not.
func TestServeWarnsOfNoKeyBeyondTheMachine(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		var logs syncBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		ix := newLiveIndex(indexer.Location{Dir: webIndex(t)}, "", retrievalOptions{Logger: log})
		ctx, cancel := context.WithCancel(context.Background())
		addrc, done := make(chan net.Addr, 1), make(chan error, 1)
		go func() {
			done <- serve(ctx, tc.addr, time.Second, server.Options{Logger: log, Index: ix}, nil, func(a net.Addr) { addrc <- a })
		}()
		<-addrc
		cancel()
		<-done
		if got := strings.Contains(logs.String(), "without an API key"); got != tc.warn {
			t.Errorf("%s: warned %v, want %v:\n%s", tc.addr, got, tc.warn, logs.String())
		}
	}
}
