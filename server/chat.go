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

// Chatter runs one chat turn. The lead adapts chat.Service to it; onToken, when non-nil,
// receives the reply as it is generated (for streaming) and must not be retained.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest, onToken func(string)) (ChatResponse, error)
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
}

// ChatStage is one stage of a turn: its output and how long it took.
type ChatStage struct {
	Stage      string          `json:"stage"`
	StartMS    float64         `json:"start_ms"` // from the start of the turn
	DurationMS float64         `json:"duration_ms"`
	LLMMS      float64         `json:"llm_ms"` // summed over the stage's LLM calls
	Calls      int             `json:"calls"`  // LLM calls
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
	PassageID string `json:"passage_id"`
	Title     string `json:"title"`
	URL       string `json:"url,omitempty"`
}

// handleChat serves POST /v1/chat, as JSON or, with "stream": true, as server-sent events:
// "token" events carry {"token": "..."}, then one "done" event carries the ChatResponse, or
// one "error" event carries an ErrorResponse.
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
	resp, err := s.opts.Chat.Chat(ctx, req, func(tok string) {
		send("token", map[string]string{"token": tok})
	})
	if err != nil {
		_, msg := classify(err, timeout)
		send("error", errorResponse(strings.TrimSpace(msg)))
		return
	}
	resp.SessionToken = fresh
	send("done", resp)
}
