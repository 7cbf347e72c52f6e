package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// groundedChatter answers with the title of the best passage for the message, word by
// word: enough of a chat turn to exercise JSON and streamed answers over real retrieval.
type groundedChatter struct{ e *fakeEngine }

func (c groundedChatter) Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error) {
	if req.Pipeline != "" && req.Pipeline != "wikichat" {
		return ChatResponse{}, fmt.Errorf("%w: unknown pipeline %q", ErrInvalid, req.Pipeline)
	}
	res, err := c.e.Search(ctx, rerank.Query{Request: search.Request{Text: req.Message, K: 1, Mode: search.ModeBM25}})
	if err != nil {
		return ChatResponse{}, err
	}
	if len(res.Hits) == 0 {
		return ChatResponse{Conversation: "c1", Reply: "I found nothing.", Citations: []ChatCitation{}}, nil
	}
	top := res.Hits[0]
	var reply strings.Builder
	for i, w := range strings.Fields(top.Title) {
		tok := w
		if i > 0 {
			tok = " " + w
		}
		reply.WriteString(tok)
		if stream != nil {
			stream.Token(tok)
		}
	}
	return ChatResponse{Conversation: "c1", Reply: reply.String(),
		Citations: []ChatCitation{{PassageID: top.ID, Title: top.Title}}}, nil
}

func TestChat(t *testing.T) {
	bare, _ := newTestServer(t, Options{})
	if w := do(bare, "POST", "/v1/chat", `{"message":"hi"}`); w.Code != 501 {
		t.Fatalf("chat without a Chatter: %d", w.Code)
	} else {
		wantError(t, w.Body.Bytes(), "chat is not configured on this server")
	}

	eng := newFakeEngine(sciFactPassages(t, 500))
	s, _ := newTestServer(t, Options{Chat: groundedChatter{eng}})
	wantTitle := "Microstructural development of human newborn cerebral white matter assessed in vivo by diffusion tensor magnetic resonance imaging."

	t.Run("json", func(t *testing.T) {
		w := do(s, "POST", "/v1/chat", `{"message":"`+newbornQuery+`"}`)
		var r ChatResponse
		mustJSON(t, w.Body.Bytes(), &r)
		if w.Code != 200 || r.Reply != wantTitle || len(r.Citations) != 1 || r.Citations[0].PassageID != newbornID {
			t.Errorf("%d %+v", w.Code, r)
		}
	})
	t.Run("stream", func(t *testing.T) {
		w := do(s, "POST", "/v1/chat", `{"message":"`+newbornQuery+`","stream":true}`)
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %q", w.Code, w.Header().Get("Content-Type"))
		}
		events := sseEvents(t, w.Body.String())
		var streamed strings.Builder
		for _, ev := range events[:len(events)-1] {
			var tok struct{ Token string }
			if ev[0] != "token" || json.Unmarshal([]byte(ev[1]), &tok) != nil {
				t.Fatalf("event %q", ev)
			}
			streamed.WriteString(tok.Token)
		}
		last := events[len(events)-1]
		var done ChatResponse
		if last[0] != "done" || json.Unmarshal([]byte(last[1]), &done) != nil {
			t.Fatalf("last event %q", last)
		}
		if streamed.String() != wantTitle || done.Reply != wantTitle || len(events) != len(strings.Fields(wantTitle))+1 {
			t.Errorf("streamed %q, done %q, %d events", streamed.String(), done.Reply, len(events))
		}
	})
	// A stream sends its status with its first event: a turn that fails before any is
	// answered as without streaming, with its own status.
	t.Run("stream error before the first event", func(t *testing.T) {
		w := do(s, "POST", "/v1/chat", `{"message":"hi","pipeline":"mpc2","stream":true}`)
		if w.Code != 400 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
		}
		wantError(t, w.Body.Bytes(), `invalid request: unknown pipeline "mpc2"`)
	})
	// After the first event the status is sent: the error event carries the one the turn
	// would have had.
	t.Run("stream error after the first event", func(t *testing.T) {
		s, _ := newTestServer(t, Options{Chat: failingChatter{tokens: []string{"Partial"}, err: fmt.Errorf("stage refine: %w", chat.ErrLLMBadResponse)}})
		w := do(s, "POST", "/v1/chat", `{"message":"hi","stream":true}`)
		events := sseEvents(t, w.Body.String())
		if w.Code != 200 || len(events) != 2 || events[0][0] != "token" || events[1][0] != "error" ||
			events[1][1] != `{"error":"the LLM's answer was not a usable completion (see the server log)","detail":"the LLM's answer was not a usable completion (see the server log)","status":502}` {
			t.Errorf("%d events %q", w.Code, events)
		}
	})
	// A chatter that panics after its first event: the stream still ends with an error event
	// that says where to look, not with a cut connection.
	t.Run("stream panic after the first event", func(t *testing.T) {
		s, _ := newTestServer(t, Options{Chat: panickingChatter{tokens: []string{"Partial"}}})
		w := do(s, "POST", "/v1/chat", `{"message":"hi","stream":true}`)
		events := sseEvents(t, w.Body.String())
		if w.Code != 200 || len(events) != 2 || events[0][0] != "token" || events[1][0] != "error" ||
			!strings.Contains(events[1][1], `"status":500`) || !strings.Contains(events[1][1], "internal error in the chat turn; see the server log") {
			t.Errorf("%d events %q", w.Code, events)
		}
		w = do(s, "POST", "/v1/chat", `{"message":"hi"}`)
		if w.Code != 500 {
			t.Errorf("without streaming: %d %s", w.Code, w.Body)
		}
	})
	for _, tt := range []struct{ name, body, msg string }{
		{"empty message", `{"message":""}`, "message: empty query"},
		{"unknown field", `{"message":"hi","history":[]}`, `unknown field "history"`},
		{"stream not bool", `{"message":"hi","stream":1}`, `field "stream": want a boolean, got JSON number`},
		{"chatter rejects", `{"message":"hi","pipeline":"mpc2"}`, `invalid request: unknown pipeline "mpc2"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, "POST", "/v1/chat", tt.body)
			if w.Code != 400 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			wantError(t, w.Body.Bytes(), tt.msg)
		})
	}
}

// failingChatter streams tokens, then fails with err.
type failingChatter struct {
	tokens []string
	err    error
}

func (c failingChatter) Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error) {
	for _, tok := range c.tokens {
		if stream != nil {
			stream.Token(tok)
		}
	}
	return ChatResponse{}, c.err
}

// panickingChatter streams tokens, then panics.
type panickingChatter struct{ tokens []string }

func (c panickingChatter) Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error) {
	for _, tok := range c.tokens {
		if stream != nil {
			stream.Token(tok)
		}
	}
	panic("chatter broke")
}

// sseEvents parses a text/event-stream into (event, data) pairs.
func sseEvents(t *testing.T, body string) [][2]string {
	t.Helper()
	var out [][2]string
	var cur [2]string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur[0] != "" {
				out = append(out, cur)
			}
			cur = [2]string{}
		case strings.HasPrefix(line, "event: "):
			cur[0] = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur[1] = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no events in %q", body)
	}
	return out
}
