// Package chattest provides test doubles for the chat layer: a scripted OpenAI-compatible server
// that recognises which stage's prompt it received, and a small lexical Retriever over real
// passages. They are exported so that CLI and server tests (and the bar's separate process) can
// drive the real pipelines without an LLM or an index.
package chattest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/chat"
)

// stageMarkers map a phrase of each default system prompt to its stage name.
var stageMarkers = []struct{ phrase, stage string }{
	{"search planner of a factual chatbot", chat.StageQuery},
	{"reading assistant of a factual chatbot", chat.StageSummarize},
	{"You are a friendly, knowledgeable chatbot", chat.StageGenerate},
	{"You check the facts in a chatbot's reply", chat.StageClaims},
	{"You are a fact-checker", chat.StageVerify},
	{"using ONLY the verified facts", chat.StageDraft},
	{"You improve a chatbot's reply", chat.StageRefine},
	{"fine-grained topic of a conversation", chat.StageCSTopic},
	{"commonsense direction", chat.StageCSDirect},
	{"plan for its next reply, you write one Wikipedia search query", chat.StageCSQuery},
	{"response in the conversation by incorporating the search result", chat.StageCSResponse},
	{"rephrase the user's last turn in the third person", chat.StageMPCClarify},
	{"memory processor of a chatbot", chat.StageMPCMemory},
	{"chatbot with a consistent persona", chat.StageMPCRespond},
	{"keep a chatbot's long-term memory", chat.StageMPCSummary},
	{"one sentence of factual knowledge about the topic", chat.StageMSDPKnow},
	{"Write the next turn of the conversation, using the knowledge", chat.StageMSDPResp},
	{"to complete the conversation 1", chat.StageSICL},
	{"Complete the following conversation by giving an appropriate answer", chat.StageSICL},
}

// StageOf names the stage whose prompt msgs are, from the system message, or "".
func StageOf(msgs []chat.Message) string {
	for _, m := range msgs {
		if m.Role != "system" {
			continue
		}
		for _, sm := range stageMarkers {
			if strings.Contains(m.Content, sm.phrase) {
				return sm.stage
			}
		}
	}
	return ""
}

// Script answers one recognised request. The last message is the live user prompt.
type Script func(stage string, msgs []chat.Message) string

// Call is one request the server received.
type Call struct {
	Stage    string
	Messages []chat.Message
	Stream   bool // the client asked for server-sent events
}

// Server is a scripted OpenAI-compatible /v1/chat/completions server.
type Server struct {
	*httptest.Server
	script  Script
	latency time.Duration
	mu      sync.Mutex
	calls   []Call
}

// NewServer starts a server answering with script after latency per call.
func NewServer(script Script, latency time.Duration) *Server {
	s := NewHandler(script, latency)
	s.Server = httptest.NewServer(s)
	return s
}

// NewHandler returns the same scripted endpoint as an http.Handler, not started, for serving
// from a real process (see chattest/fakellm). Its BaseURL and Close must not be used.
func NewHandler(script Script, latency time.Duration) *Server {
	return &Server{script: script, latency: latency}
}

// URL is the base URL to give the client ("…/v1").
func (s *Server) BaseURL() string { return s.Server.URL + "/v1" }

// Calls returns the requests so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Stages returns the stage of every call so far, in arrival order.
func (s *Server) Stages() []string {
	var out []string
	for _, c := range s.Calls() {
		out = append(out, c.Stage)
	}
	return out
}

// ServeHTTP implements the OpenAI chat completions endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string         `json:"model"`
		Messages []chat.Message `json:"messages"`
		Stream   bool           `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	stage := StageOf(req.Messages)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Stage: stage, Messages: req.Messages, Stream: req.Stream})
	s.mu.Unlock()
	if s.latency > 0 {
		time.Sleep(s.latency)
	}
	text := s.script(stage, req.Messages)
	finish := "stop"
	if t, ok := strings.CutPrefix(text, CutAtLimit); ok {
		text, finish = t, "length"
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	usage := map[string]int{"prompt_tokens": prompt, "completion_tokens": len(strings.Fields(text)), "total_tokens": prompt + len(strings.Fields(text))}
	if req.Stream {
		writeSSE(w, req.Model, text, finish, usage)
		return
	}
	resp := map[string]any{
		"id": "fake", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": chat.Message{Role: "assistant", Content: text}, "finish_reason": finish}},
		"usage":   usage,
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(resp); err != nil {
		panic(fmt.Sprintf("chattest: encoding response: %v", err))
	}
}

// writeSSE streams text as OpenAI chat.completion.chunk events of a few bytes each (cut at
// rune boundaries), then a usage chunk and [DONE].
func writeSSE(w http.ResponseWriter, model, text, finish string, usage map[string]int) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	runes := []rune(text)
	for i := 0; i < len(runes); i += 4 {
		piece := string(runes[i:min(i+4, len(runes))])
		send(map[string]any{"object": "chat.completion.chunk", "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": piece}}}})
	}
	send(map[string]any{"object": "chat.completion.chunk", "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]string{}, "finish_reason": finish}}})
	send(map[string]any{"object": "chat.completion.chunk", "model": model, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// CutAtLimit, put before a script's answer, makes the server report finish_reason "length":
// the answer was cut at the token limit.
const CutAtLimit = "\x00finish_reason=length\x00"

// LastUser returns the content of the last user message.
func LastUser(msgs []chat.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// Field returns the value after "label:" on the first line of text that starts with it.
func Field(text, label string) string {
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), label+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// NoLLM is a Completer that fails every call, for tests that must not reach an LLM.
type NoLLM struct{}

// Complete always fails.
func (NoLLM) Complete(context.Context, chat.CompletionRequest) (chat.Completion, error) {
	return chat.Completion{}, errors.New("chattest.NoLLM: no LLM in this test")
}

// Completer answers with a script in-process, without HTTP: it isolates Kairos's own overhead
// from any transport when benchmarking.
type Completer struct{ Script Script }

var _ chat.Completer = Completer{}

// Complete recognises the stage and returns the script's answer.
func (c Completer) Complete(ctx context.Context, req chat.CompletionRequest) (chat.Completion, error) {
	if err := ctx.Err(); err != nil {
		return chat.Completion{}, err
	}
	text := c.Script(StageOf(req.Messages), req.Messages)
	finish := "stop"
	if t, ok := strings.CutPrefix(text, CutAtLimit); ok {
		text, finish = t, "length"
	}
	return chat.Completion{Text: text, Attempts: 1, Usage: chat.Usage{Calls: 1}, FinishReason: finish}, nil
}
