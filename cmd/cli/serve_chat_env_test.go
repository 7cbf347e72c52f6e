package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/server"
)

// The serving tests run `kairos serve` (cmdServe, with its real flags) on a loopback port, over
// a real index of Wikipedia leads built by `kairos index`, with chat on a scripted LLM.

// serveScript is cliScript (wikichat, commonsense) with answers for MPC's stages, whose reply
// nothing checks against sources.
func serveScript(stage string, msgs []chat.Message) string {
	switch stage {
	case chat.StageMPCClarify:
		return "Clarified: Who directed Frozen?"
	case chat.StageMPCMemory:
		return "Reasoning: nothing remembered applies.\nMemory: none"
	case chat.StageMPCRespond:
		return "Bot: I believe two directors made it together."
	case chat.StageMPCSummary:
		return "None"
	}
	return cliScript(stage, msgs)
}

// leadsIndex writes the Wikipedia leads as JSON lines, each with the URL link(title) gives it,
// indexes them with `kairos index` and returns the index directory and the command's summary.
func leadsIndex(t *testing.T, link func(title string) string) (string, string) {
	t.Helper()
	leads, err := chattest.LoadLeads(coreShared(t, "data/wikichat-topics/recent_articles_en.json"), 120)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "leads.jsonl")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, p := range leads {
		enc.Encode(map[string]string{"_id": p.DocID, "title": p.Title, "text": strings.TrimPrefix(p.Text, p.Title+" | "), "url": link(p.Title)})
	}
	f.Close()
	idx := filepath.Join(dir, "idx")
	out, _, err := runCLI(t, "index", "--input", src, "--index", idx)
	if err != nil {
		t.Fatal(err)
	}
	return idx, out
}

func wikiLink(title string) string {
	return "https://en.wikipedia.org/wiki/" + strings.ReplaceAll(title, " ", "_")
}

// serveProc is a running `kairos serve`.
type serveProc struct {
	t    *testing.T
	base string
	log  *addrWriter
	stop func() error // shuts it down and returns serve's error; called at the test's end too
}

// runServe starts `kairos serve` with args until stop or the test's end.
func runServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logw := &addrWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	args = append(args, "--addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "info")
	go func() { done <- cmdServe(ctx, args, IO{Stdout: io.Discard, Stderr: logw}) }()
	p := &serveProc{t: t, log: logw}
	stopped := false
	var serr error
	p.stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			serr = <-done
		}
		return serr
	}
	select {
	case a := <-logw.addr:
		p.base = "http://" + a
		t.Cleanup(func() {
			if err := p.stop(); err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return p
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\n%s", err, logw)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("serve did not start:\n%s", logw)
	}
	return nil
}

// chatServe runs serve on idx with chat on the LLM at llmURL, conversations in memory, and
// the extra flags.
func chatServe(t *testing.T, idx, llmURL string, extra ...string) *serveProc {
	t.Helper()
	return runServe(t, append([]string{"--index", idx, "--llm-url", llmURL, "--llm-model", "fake", "--chat-store", ""}, extra...)...)
}

// reply is one HTTP answer.
type reply struct {
	code int
	hdr  http.Header
	body []byte
}

func (r reply) chat(t *testing.T) server.ChatResponse {
	t.Helper()
	var cr server.ChatResponse
	if r.code != 200 || json.Unmarshal(r.body, &cr) != nil {
		t.Fatalf("chat: %d %s", r.code, r.body)
	}
	return cr
}

func (r reply) errorMessage(t *testing.T) string {
	t.Helper()
	var e server.ErrorResponse
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" {
		t.Fatalf("not an error body (%d): %s", r.code, r.body)
	}
	return e.Error
}

// do sends one request; hdr are header name/value pairs.
func (p *serveProc) do(method, path, body string, hdr ...string) reply {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, p.base+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

// turn posts a chat message to conversation id ("" starts one) as session tok ("" none).
func (p *serveProc) turn(id, tok, msg string, more ...string) reply {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"conversation_id": id, "message": msg})
	body := string(b)
	if len(more) > 0 { // extra fields, as `"stream": true`
		body = strings.TrimSuffix(body, "}") + "," + strings.Join(more, ",") + "}"
	}
	var hdr []string
	if tok != "" {
		hdr = append(hdr, server.SessionHeader, tok)
	}
	return p.do("POST", "/v1/chat", body, hdr...)
}

// metric sums the samples of a /metrics series whose labels include all of want
// (name="value" pairs, written as in the exposition).
func (p *serveProc) metric(name string, want ...string) float64 {
	p.t.Helper()
	r := p.do("GET", "/metrics", "")
	sum := 0.0
	for _, line := range strings.Split(string(r.body), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(line, w)
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			p.t.Fatalf("metric line %q", line)
		}
		sum += v
	}
	return sum
}
