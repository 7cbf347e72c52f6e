package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Chatter runs one chat turn. ChatService adapts chat.Service to it; stream, when non-nil,
// receives the reply as it is generated and must not be retained.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error)
}

// ChatStream receives a streamed reply: Token its pieces, then, when the text streamed is not
// the reply the final checks let through, Replace the whole reply that replaces it. Either may
// be nil.
type ChatStream struct {
	Token   func(piece string)
	Replace func(reply string)
}

// ChatRequest is the body of POST /v1/chat.
type ChatRequest struct {
	// Conversation is the id of the dialogue whose history the turn continues, as an earlier
	// response returned it; empty starts one. An id the caller does not own is a 404.
	Conversation string `json:"conversation_id,omitempty"`
	// Owner is whom the conversation belongs to, set by the server from the caller's API key
	// or session token, never read from the body.
	Owner    string `json:"-"`
	Message  string `json:"message"`            // the user's turn; required
	Pipeline string `json:"pipeline,omitempty"` // wikichat, mpc, msdp, sicl, ...; "" is the default
	Time     string `json:"time,omitempty"`     // time specification, as in /v1/search
	Stream   bool   `json:"stream,omitempty"`   // answer as text/event-stream
}

// ChatResponse is the answer to one turn.
type ChatResponse struct {
	Conversation string `json:"conversation_id"`
	// SessionToken is set when this turn started a session (a server without API keys, a
	// caller that sent no token): send it back in the X-Kairos-Session header (or the
	// kairos_session cookie, set too) to continue or delete the conversation.
	SessionToken string         `json:"session_token,omitempty"`
	Reply        string         `json:"reply"`
	Citations    []ChatCitation `json:"citations"`
	// Stages reports what each pipeline stage did (queries issued, claims checked, ...).
	Stages map[string]any `json:"stages,omitempty"`
	// Trace lists the stages in the order they finished, with their timings: what the web
	// page's trace panel shows.
	Trace []ChatStage `json:"trace,omitempty"`
	// Pipeline is the pipeline that answered.
	Pipeline string `json:"pipeline,omitempty"`
	// Usage is the turn's LLM usage and cost; ConversationUsage the conversation's so far.
	Usage             *ChatUsage `json:"usage,omitempty"`
	ConversationUsage *ChatUsage `json:"conversation_usage,omitempty"`
}

// ChatUsage counts LLM tokens as the LLM server reported them, or as estimated from the text
// for the EstimatedCalls of Calls whose answer carried no usage, and prices them (Cost, in the
// currency of serve's --llm-price-prompt and --llm-price-completion; 0 without prices).
type ChatUsage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	Calls            int     `json:"calls"`
	EstimatedCalls   int     `json:"estimated_calls,omitempty"`
	Cost             float64 `json:"cost,omitempty"`
}

// ChatStage is one stage of a turn: its output and how long it took.
type ChatStage struct {
	Stage      string          `json:"stage"`
	StartMS    float64         `json:"start_ms"` // from the start of the turn
	DurationMS float64         `json:"duration_ms"`
	LLMMS      float64         `json:"llm_ms"` // summed over the stage's LLM calls
	Calls      int             `json:"calls"`  // LLM calls
	Usage      *ChatUsage      `json:"usage,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Errors     []string        `json:"errors,omitempty"` // unusable LLM outputs the stage skipped
}

// PipelineLister is implemented by a Chatter that can name its pipelines, default first;
// GET /v1/stats reports them so that clients (the web page) can offer the choice.
type PipelineLister interface {
	Pipelines() []string
}

// ChatCitation is a passage the reply relies on.
type ChatCitation struct {
	// N is the number of the reply's inline marker "[N]" that cites this passage; 0 when
	// the reply carries no marker and the passage is one it was built from.
	N         int    `json:"n,omitempty"`
	PassageID string `json:"passage_id"`
	Title     string `json:"title"`
	Section   string `json:"section,omitempty"`
	URL       string `json:"url,omitempty"`
	// Facts are the verified facts of the passage the reply was drafted from.
	Facts []string `json:"facts,omitempty"`
}

// handleChat serves POST /v1/chat, as JSON or, with "stream": true, as server-sent events:
// "token" events carry {"token": "..."}; a "replace" event {"reply": "..."} says that the
// tokens so far are withdrawn and replaced by that reply (the final checks refused or cut what
// streamed); then one "done" event carries the ChatResponse, or one "error" event carries an
// ErrorResponse.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	if s.opts.Chat == nil {
		writeError(w, http.StatusNotImplemented, "chat is not configured on this server")
		return
	}
	body, err := readBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	var req ChatRequest
	if err := decodeStrict(body, &req); err != nil {
		writeErr(w, err, "")
		return
	}
	lim := s.opts.limits()
	if _, err := lim.text("message", req.Message); err != nil {
		writeErr(w, err, "")
		return
	}
	owner, fresh, known, err := s.chatOwner(r, req.Conversation == "")
	if err != nil {
		writeErr(w, err, "")
		return
	}
	if !known {
		writeError(w, http.StatusNotFound, "conversation "+strconv.Quote(req.Conversation)+": no such conversation")
		return
	}
	req.Owner = owner
	if fresh != "" {
		setSession(w, fresh)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.ChatTimeout)
	defer cancel()
	timeout := s.opts.ChatTimeout.String()
	// A turn waits on a remote LLM for longer than the http.Server's write timeout allows a
	// search; the chat timeout bounds it instead.
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(s.opts.ChatTimeout + 5*time.Second))
	if !req.Stream {
		resp, err := s.opts.Chat.Chat(ctx, req, nil)
		if err != nil {
			writeErr(w, err, timeout)
			return
		}
		resp.SessionToken = fresh
		s.metrics.chatTurn(resp)
		writeJSON(w, http.StatusOK, resp)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		rc.Flush()
	}
	resp, err := s.opts.Chat.Chat(ctx, req, &ChatStream{
		Token:   func(tok string) { send("token", map[string]string{"token": tok}) },
		Replace: func(reply string) { send("replace", map[string]string{"reply": reply}) },
	})
	if err != nil {
		_, msg := classify(err, timeout)
		send("error", ErrorResponse{Error: strings.TrimSpace(msg)})
		return
	}
	resp.SessionToken = fresh
	s.metrics.chatTurn(resp)
	send("done", resp)
}
