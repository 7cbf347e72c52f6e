package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// stageCall is what a recorded LLM was asked for one call.
type stageCall struct {
	Stage       string
	Model       string   `json:"model"`
	Temperature float64  `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	MaxTokens   int      `json:"max_tokens"`
	Auth        string
}

// recordedLLM is a scripted LLM (serveScript) that records the settings of every call.
type recordedLLM struct {
	*httptest.Server
	mu    sync.Mutex
	calls []stageCall
}

func newRecordedLLM(t *testing.T) *recordedLLM {
	t.Helper()
	l := &recordedLLM{}
	script := chattest.NewHandler(serveScript, 0)
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var c stageCall
		var msgs struct{ Messages []chat.Message }
		json.Unmarshal(b, &c)
		json.Unmarshal(b, &msgs)
		c.Stage, c.Auth = chattest.StageOf(msgs.Messages), r.Header.Get("Authorization")
		l.mu.Lock()
		l.calls = append(l.calls, c)
		l.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		script.ServeHTTP(w, r)
	}))
	t.Cleanup(l.Close)
	return l
}

// byStage returns the calls of each stage, and forgets them.
func (l *recordedLLM) byStage() map[string][]stageCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]stageCall{}
	for _, c := range l.calls {
		out[c.Stage] = append(out[c.Stage], c)
	}
	l.calls = nil
	return out
}

// Per-stage LLM settings, by --llm-stage and --llm-config, in kairos serve and kairos chat: a
// stage goes to its own URL and model with its sampling, the others to --llm-url; a flag wins
// over the file field by field; the main LLM's key does not go to another origin.
func TestServeChatStageLLMs(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	main, big := newRecordedLLM(t), newRecordedLLM(t)
	t.Setenv("KAIROS_TEST_LLM_KEY", "main-key")
	cfg := filepath.Join(t.TempDir(), "llm.json")
	os.WriteFile(cfg, []byte(`{"stages": {
		"draft": {"url": "`+big.URL+`/v1", "model": "big-model", "temperature": 0.5, "max_tokens": 200},
		"wikichat_verify": {"max_tokens": 64, "top_p": 0.5}}}`), 0o644)
	flags := []string{"--llm-key-env", "KAIROS_TEST_LLM_KEY", "--llm-config", cfg,
		"--llm-stage", "draft:temperature=0.2,max_tokens=300", "--llm-stage", "refine:url=" + big.URL + "/v1,model=refiner"}
	check := func(how string) {
		t.Helper()
		m, b := main.byStage(), big.byStage()
		half := 0.5
		for _, tt := range []struct {
			calls []stageCall
			stage string
			want  stageCall
		}{
			{b[chat.StageDraft], chat.StageDraft, stageCall{Stage: "draft", Model: "big-model", Temperature: 0.2, MaxTokens: 300}},
			{b[chat.StageRefine], chat.StageRefine, stageCall{Stage: "refine", Model: "refiner", MaxTokens: chat.DefaultMaxTokens}},
			{m[chat.StageVerify], chat.StageVerify, stageCall{Stage: "verify", Model: "fake", TopP: &half, MaxTokens: 64, Auth: "Bearer main-key"}},
			{m[chat.StageQuery], chat.StageQuery, stageCall{Stage: "query", Model: "fake", MaxTokens: chat.DefaultMaxTokens, Auth: "Bearer main-key"}},
		} {
			if len(tt.calls) == 0 {
				t.Errorf("%s: no %s call reached its LLM", how, tt.stage)
			}
			for _, c := range tt.calls {
				g, _ := json.Marshal(c)
				w, _ := json.Marshal(tt.want)
				if !bytes.Equal(g, w) {
					t.Errorf("%s: %s call %s, want %s", how, tt.stage, g, w)
				}
			}
		}
		for _, st := range []string{chat.StageDraft, chat.StageRefine} {
			if n := len(m[st]); n != 0 {
				t.Errorf("%s: %d %s calls reached the main LLM", how, n, st)
			}
		}
		if len(b) != 2 {
			t.Errorf("%s: the stage LLM got stages %v", how, b)
		}
	}

	s := chatServe(t, idx, main.URL+"/v1", append(flags, "--chat-rate-limit", "-1")...)
	if r := s.turn("", "", "Who directed Frozen?").chat(t); r.Reply != webFrozenReply {
		t.Errorf("reply %q", r.Reply)
	}
	check("kairos serve")

	out, _, err := runCLI(t, append([]string{"chat", "--index", idx, "--llm-url", main.URL + "/v1", "--llm-model", "fake",
		"--message", "Who directed Frozen?"}, flags...)...)
	if err != nil || !strings.HasPrefix(out, webFrozenReply) {
		t.Fatalf("kairos chat: %v %q", err, out)
	}
	check("kairos chat")
}

// A bad per-stage setting is refused before anything is served, naming the file and the
// field, or the flag.
func TestServeChatStageLLMErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"misspelt field", []string{"--llm-config", write("a.json", `{"stages": {"draft": {"temprature": 0.2}}}`)},
			[]string{filepath.Join(dir, "a.json"), `stages.draft: unknown field "temprature"`}},
		{"out of range", []string{"--llm-config", write("b.json", `{"stages": {"verify": {"temperature": 7}}}`)},
			[]string{filepath.Join(dir, "b.json"), "stages.verify.temperature: 7 outside [0, 2]"}},
		{"unknown stage", []string{"--llm-config", write("c.json", `{"stages": {"drafting": {"model": "x"}}}`)},
			[]string{filepath.Join(dir, "c.json"), `stages.drafting: unknown stage "drafting"`}},
		{"missing file", []string{"--llm-config", filepath.Join(dir, "none.json")}, []string{"llm config", "none.json"}},
		{"bad flag", []string{"--llm-stage", "draft:max_tokens=many"}, []string{"-llm-stage", `draft: max_tokens: "many" is not an integer`}},
	} {
		for _, cmd := range []string{"chat", "serve"} {
			args := append([]string{cmd, "--index", dir, "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--message", "hi"}, tt.args...)
			if cmd == "serve" {
				args = append([]string{cmd, "--index", dir, "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--addr", "127.0.0.1:0"}, tt.args...)
			}
			_, stderr, err := runCLI(t, args...)
			msg := ""
			if err != nil {
				msg = err.Error() + " " + stderr
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s %s: error %q lacks %q", cmd, tt.name, msg, w)
				}
			}
		}
	}
	// Stage settings without chat are refused, not ignored.
	_, _, err := runCLI(t, "serve", "--index", dir, "--llm-stage", "draft:model=x", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "needs --llm-url and --llm-model") {
		t.Errorf("serve --llm-stage without --llm-url: %v", err)
	}
}
