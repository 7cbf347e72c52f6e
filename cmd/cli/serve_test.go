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
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
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
	return corpus.Passage{}, fmt.Errorf("passage %q: %w", id, server.ErrNotFound)
}

func (e *holdEngine) Stats(ctx context.Context) (search.Stats, error) {
	return search.Stats{Documents: 1, Passages: 1}, nil
}

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
		Loader: func(ctx context.Context) (server.Engine, io.Closer, error) {
			e := &holdEngine{p: p, entered: make(chan struct{}), hold: make(chan struct{})}
			engines = append(engines, e)
			loads <- struct{}{}
			return e, e, nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", 5*time.Second, opts, hup, func(a net.Addr) { addrc <- a }, nil)
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
		if _, body := get("/readyz"); strings.Contains(body, `"generation":2`) {
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

// TestOpenEngine builds a real index of 300 SciFact abstracts and checks the adapter the
// server gets: retrieval, passage lookup, stats, and 400s for what the index cannot do.
func TestOpenEngine(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scifact300.jsonl")
	writeSciFactHead(t, in, 300)
	ctx := context.Background()
	if _, err := indexer.Build(ctx, indexer.Options{Dir: filepath.Join(dir, "index"),
		Inputs: []indexer.InputSpec{{Path: in, Options: corpus.Options{Source: "scifact"}}}}); err != nil {
		t.Fatal(err)
	}
	e, c, err := openEngine(ctx, retrievalOptions{Index: filepath.Join(dir, "index")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := e.Stats(ctx)
	if err != nil || st.Documents != 300 || st.Passages < 300 || st.Dense {
		t.Fatalf("stats %+v, %v", st, err)
	}
	q := rerank.Query{Request: search.Request{Text: "cerebral white matter diffusion tensor newborn", K: 3, Mode: search.ModeBM25}}
	res, err := e.Search(ctx, q)
	if err != nil || len(res.Hits) != 3 || res.Hits[0].DocID != "4983" {
		t.Fatalf("search: %v %+v", err, res.Hits)
	}
	if p, err := e.Passage(ctx, res.Hits[0].ID); err != nil || p.DocID != "4983" {
		t.Errorf("passage %s: %+v %v", res.Hits[0].ID, p, err)
	}
	if _, err := e.Passage(ctx, "nope#0"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("unknown passage: %v", err)
	}
	for _, tt := range []struct {
		name string
		mod  func(*rerank.Query)
		msg  string
	}{
		{"dense", func(q *rerank.Query) { q.Mode = search.ModeDense }, "invalid request: mode dense needs an index with dense vectors and the server's --model"},
		{"cross", func(q *rerank.Query) { q.Rerank = []rerank.Stage{rerank.StageCross} }, "invalid request: rerank cross: no cross-encoder is configured"},
	} {
		q2 := q
		tt.mod(&q2)
		if _, err := e.Search(ctx, q2); !errors.Is(err, server.ErrInvalid) || err.Error() != tt.msg {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	q.Rerank, q.Time = []rerank.Stage{rerank.StageTime}, timex.Spec{Kind: timex.KindRecent}
	if res, err := e.Search(ctx, q); err != nil || len(res.Hits) != 3 {
		t.Errorf("time rerank: %v", err)
	}
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
