package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/chat"
)

// Chatter runs one chat turn. ChatService adapts chat.Service to it; stream, when non-nil,
// receives the reply as it is generated and must not be retained.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error)
}

// ChatStream receives a streamed reply: Token gets each sentence once the turn's checks have
// passed it, and the pieces concatenate to the reply; nothing streamed is taken back.
type ChatStream struct {
	Token func(piece string)
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
	// NewSession asks for a new session token to own the conversation this turn starts
	// (ChatResponse.SessionToken): a gateway sharing the server's API key keeps each of its
	// users apart this way. Without an API key a turn that starts a conversation without a
	// token gets one anyway. Only with an empty Conversation.
	NewSession bool `json:"new_session,omitempty"`
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
	// Grounded says that every sentence of the reply was checked against the passages it
	// cites (wikichat, commonsense). false: the pipeline answers from the LLM, a memory pool
	// or an example bank (mpc, msdp, sicl), and nothing checked the reply against sources.
	Grounded bool `json:"grounded"`
	// Dropped counts, by stage, the sentences the LLM wrote that the attribution check
	// removed, for the server's metrics; the trace shows them.
	Dropped map[string]int `json:"-"`
	// Stages reports what each pipeline stage did (queries issued, claims checked, ...).
	// Sent only by a server with Options.ChatTrace (--chat-trace): it holds the LLM's
	// unchecked text.
	Stages map[string]any `json:"stages,omitempty"`
	// Trace lists the stages in the order they finished, with their timings: what the web
	// page's trace panel shows. Only with Options.ChatTrace, as Stages.
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
// "token" events carry {"token": "..."}, each a sentence of the reply once it has passed the
// turn's checks (so they concatenate to the reply, and none is ever withdrawn); then one "done"
// event carries the ChatResponse, or one "error" event carries a ChatStreamError. A stream's status and headers are sent with its first event, so that a
// turn failing before any (the LLM down, rate limiting, too slow) is answered with its own
// status, as without streaming.
//
// Before the turn runs: an unknown conversation is a 404; an owner past its rate
// (Options.ChatRatePerMinute) a 429, and a server running ChatMaxInFlight turns a 503, both
// with Retry-After.
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
	if req.NewSession && req.Conversation != "" {
		writeError(w, http.StatusBadRequest, "new_session starts a conversation: leave conversation_id empty")
		return
	}
	caller, err := s.chatOwner(r, req.Conversation == "", req.NewSession)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	if caller.owner == "" {
		writeErr(w, errNoConversation, "")
		return
	}
	if ok, wait := s.chatLimit.allow(caller.limitKey); !ok {
		s.metrics.chatRefused(refusedRateLimited)
		setRetryAfter(w, http.StatusTooManyRequests, wait)
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("chat rate limit: %g turns a minute per client, %d at once (--chat-rate-limit, --chat-rate-burst); retry in %s s",
			s.opts.ChatRatePerMinute, s.opts.ChatBurst, retrySeconds(wait)))
		return
	}
	if req.Conversation == "" && s.opts.APIKey == "" {
		if ok, wait := s.newConvLimit.allow(caller.limitKey); !ok {
			s.metrics.chatRefused(refusedRateLimited)
			setRetryAfter(w, http.StatusTooManyRequests, wait)
			writeError(w, http.StatusTooManyRequests, fmt.Sprintf("new conversations: %d a day per client (--chat-new-per-day); continue one of yours, or retry in %s s",
				s.opts.ChatNewPerDay, retrySeconds(wait)))
			return
		}
	}
	if n := s.chatInFlight.Add(1); n > int64(s.opts.ChatMaxInFlight) {
		s.chatInFlight.Add(-1)
		s.metrics.chatRefused(refusedBusy)
		setRetryAfter(w, http.StatusServiceUnavailable, 0)
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("chat busy: %d turns running (--chat-max-in-flight); retry later", s.opts.ChatMaxInFlight))
		return
	}
	defer s.chatInFlight.Add(-1)
	req.Owner = caller.owner
	if caller.fresh != "" {
		setSession(w, r, caller.fresh)
	}
	pipeline := req.Pipeline
	if pl, ok := s.opts.Chat.(PipelineLister); ok && pipeline == "" {
		if names := pl.Pipelines(); len(names) > 0 {
			pipeline = names[0]
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.ChatTimeout)
	defer cancel()
	ctx = chat.WithCallObserver(ctx, func(c chat.CallRecord) { s.metrics.llmCall(pipeline, c) })
	// A turn waits on a remote LLM for longer than the http.Server's write timeout allows a
	// search; the chat timeout bounds it instead.
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(s.opts.ChatTimeout + 5*time.Second))
	if !req.Stream {
		resp, err := s.chatTurn(ctx, r, req, nil)
		if err != nil {
			status, msg, retry := s.chatFailure(r, err)
			setRetryAfter(w, status, retry)
			writeError(w, status, msg)
			return
		}
		resp.SessionToken = caller.fresh
		s.metrics.chatTurn(resp)
		writeJSON(w, http.StatusOK, s.chatVisible(resp))
		return
	}
	started := false
	send := func(event string, v any) {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		rc.Flush()
	}
	resp, err := s.chatTurn(ctx, r, req, &ChatStream{
		Token: func(tok string) { send("token", map[string]string{"token": tok}) },
	})
	if err != nil {
		status, msg, retry := s.chatFailure(r, err)
		if !started {
			setRetryAfter(w, status, retry)
			writeError(w, status, msg)
			return
		}
		e := ChatStreamError{ErrorResponse: errorResponse(strings.TrimSpace(msg)), Status: status}
		if retry > 0 {
			e.RetryAfter, _ = strconv.Atoi(retrySeconds(retry))
		}
		send("error", e)
		return
	}
	resp.SessionToken = caller.fresh
	s.metrics.chatTurn(resp)
	send("done", s.chatVisible(resp))
}

// chatTurn runs the chatter, turning a panic into an error: a stream that has sent its status
// with its first event cannot be answered with a 500 any more, so the middleware's recovery
// would end it without a word, and its client could not tell a broken turn from a short reply.
// Here it ends with an "error" event instead; the panic and its stack go to the log.
func (s *Server) chatTurn(ctx context.Context, r *http.Request, req ChatRequest, stream *ChatStream) (resp ChatResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.opts.Logger.Error("chat turn panic", "request_id", requestID(r), "panic", p, "stack", string(debug.Stack()))
			resp, err = ChatResponse{}, fmt.Errorf("the chat turn panicked: %v", p)
		}
	}()
	return s.opts.Chat.Chat(ctx, req, stream)
}

// chatVisible is resp as its caller may see it: without the stages' outputs and timings
// unless the server sends them (Options.ChatTrace), since they hold the LLM's unchecked text.
func (s *Server) chatVisible(resp ChatResponse) ChatResponse {
	if !s.opts.ChatTrace {
		resp.Stages, resp.Trace = nil, nil
	}
	return resp
}

// ChatStreamError is the "error" event of a stream that failed after its first event: the
// status the turn would have been answered with, and when to retry.
type ChatStreamError struct {
	ErrorResponse
	Status     int `json:"status"`
	RetryAfter int `json:"retry_after,omitempty"` // seconds
}

// chatFailure maps a failed turn to its answer (classifyRetry) and logs what went wrong, with
// the detail the answer leaves out: an LLM's own words and address stay in the log, and an
// error no case names is a 500 that says only where to look.
func (s *Server) chatFailure(r *http.Request, err error) (status int, msg string, retry time.Duration) {
	status, msg, retry = classifyRetry(err, s.opts.ChatTimeout.String())
	status, msg, retry = stoppedByShutdown(s.draining.Load(), status, msg, retry)
	switch {
	case errors.Is(err, chat.ErrStoreFull):
		s.metrics.chatRefused(refusedStoreFull)
	case errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, chat.ErrLLMTimeout):
		msg = "the chat turn did not finish within " + s.opts.ChatTimeout.String() + " (--chat-timeout)"
	case status == http.StatusInternalServerError:
		msg = "internal error in the chat turn; see the server log (request " + requestID(r) + ")"
	case errors.Is(err, chat.ErrRetrieval):
		// The error quotes the query, which the LLM may have written: the log keeps it.
		msg = "the chat turn's retrieval failed (" + http.StatusText(status) + "); see the server log (request " + requestID(r) + ")"
	}
	level := slog.LevelWarn
	if status == 499 || status < 500 {
		level = slog.LevelInfo
	}
	s.opts.Logger.Log(r.Context(), level, "chat turn failed", "status", status, "request_id", requestID(r), "err", err.Error())
	return status, msg, retry
}
