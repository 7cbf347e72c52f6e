package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ServiceOptions configures a Service.
type ServiceOptions struct {
	Pipelines []Pipeline // at least one; the first is the default
	Store     *Store     // default: in memory, default limits
	// ServerIDs makes the service the only source of conversation ids: a turn naming an
	// unknown conversation (or another owner's) fails with ErrConversationNotFound instead of
	// starting one under that name. A server sets it, so that ids are unguessable and never
	// chosen by a client; `kairos chat --conversation NAME` (one local user) does not.
	ServerIDs bool
	// Transcript, when set, receives one JSON line per turn (TranscriptLine).
	Transcript io.Writer
	// MaxMessageBytes rejects longer user messages; default 8192.
	MaxMessageBytes int
	Logger          *slog.Logger // default: discard
}

// Service runs turns of conversations through named pipelines. It is what `kairos chat` and
// POST /v1/chat use; safe for concurrent use.
type Service struct {
	opts      ServiceOptions
	pipelines map[string]Pipeline
	tmu       sync.Mutex // serialises transcript lines
}

// NewService validates opts.
func NewService(opts ServiceOptions) (*Service, error) {
	if len(opts.Pipelines) == 0 {
		return nil, errors.New("chat service: no pipeline")
	}
	if opts.Store == nil {
		opts.Store, _ = OpenStore(StoreOptions{})
	}
	if opts.MaxMessageBytes == 0 {
		opts.MaxMessageBytes = 8192
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: opts, pipelines: map[string]Pipeline{}}
	for _, p := range opts.Pipelines {
		if _, dup := s.pipelines[p.Name()]; dup {
			return nil, fmt.Errorf("chat service: two pipelines named %q", p.Name())
		}
		s.pipelines[p.Name()] = p
	}
	return s, nil
}

// Pipelines lists the pipeline names, default first.
func (s *Service) Pipelines() []string {
	names := make([]string, len(s.opts.Pipelines))
	for i, p := range s.opts.Pipelines {
		names[i] = p.Name()
	}
	return names
}

// TurnRequest is one user message.
type TurnRequest struct {
	ConversationID string `json:"conversation_id,omitempty"` // "" starts a new conversation
	// Owner is whom the conversation belongs to (a server's caller: its API key or session
	// token); another owner's conversation is not found. "" is the local user.
	Owner    string `json:"-"`
	Message  string `json:"message"`
	Pipeline string `json:"pipeline,omitempty"` // "" is the default pipeline
}

// TurnResponse is the bot's reply and the full record of the turn.
type TurnResponse struct {
	ConversationID string `json:"conversation_id"`
	Response       string `json:"response"`
	Turn           Turn   `json:"turn"` // stages, passages, timings, token usage and cost
	// ConversationUsage is the LLM usage and cost of the conversation so far, this turn
	// included.
	ConversationUsage Usage `json:"conversation_usage"`
}

// ErrBadRequest wraps errors caused by the request itself (HTTP 400).
var ErrBadRequest = errors.New("bad chat request")

// Stream receives a turn's reply as it is generated.
type Stream struct {
	// Token receives the reply in pieces, which concatenate to TurnResponse.Response unless
	// Replace is called.
	Token func(piece string)
	// Replace, called at most once after the last Token, says that the text streamed is not
	// the turn's reply (the final checks refused it, or they cut or cleaned it differently:
	// a refinement whose revision did not parse, a reply cut at the token limit) and gives
	// the whole reply that replaces it. Nil: the replacement is not announced, and only
	// TurnResponse.Response says what the reply is.
	Replace func(reply string)
}

// Turn runs one turn. stream, when not nil, receives the final response as it is generated.
// Every pipeline streams its last LLM stage as the LLM writes it (wikichat and commonsense:
// the refinement's revised response, or the draft when refine is skipped; mpc, msdp and sicl:
// their reply), through the same cleaning as the reply itself; a reply that never streamed
// (a fallback, "I'm not sure") is sent in word pieces once the turn is done.
func (s *Service) Turn(ctx context.Context, req TurnRequest, stream *Stream) (TurnResponse, error) {
	msg := strings.TrimSpace(req.Message)
	switch {
	case msg == "":
		return TurnResponse{}, fmt.Errorf("%w: empty message", ErrBadRequest)
	case len(msg) > s.opts.MaxMessageBytes:
		return TurnResponse{}, fmt.Errorf("%w: message of %d bytes exceeds %d", ErrBadRequest, len(msg), s.opts.MaxMessageBytes)
	case !utf8.ValidString(msg):
		return TurnResponse{}, fmt.Errorf("%w: message is not valid UTF-8", ErrBadRequest)
	}
	name := req.Pipeline
	if name == "" {
		name = s.opts.Pipelines[0].Name()
	}
	p, ok := s.pipelines[name]
	if !ok {
		return TurnResponse{}, fmt.Errorf("%w: unknown pipeline %q (have %s)", ErrBadRequest, name, strings.Join(s.Pipelines(), ", "))
	}
	id, create := req.ConversationID, !s.opts.ServerIDs
	if id == "" {
		id, create = NewConversationID(), true
	}
	start := time.Now()
	h, err := s.opts.Store.acquire(req.Owner, id, create)
	switch {
	case errors.Is(err, ErrBadConversationID) && s.opts.ServerIDs:
		// Not a well-formed id is not one of ours either: the same answer as any unknown id.
		return TurnResponse{}, fmt.Errorf("conversation %q: %w", truncate(id, 80), ErrConversationNotFound)
	case errors.Is(err, ErrBadConversationID):
		return TurnResponse{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	case errors.Is(err, ErrConversationNotFound):
		return TurnResponse{}, fmt.Errorf("conversation %q: %w", truncate(id, 80), err)
	case err != nil:
		return TurnResponse{}, err
	}
	defer h.release()
	conv := h.conv

	tr := NewTracer()
	if stream != nil && stream.Token != nil {
		tr.onToken = stream.Token
	}
	reply, err := respond(ctx, p, conv, msg, tr)
	// Markers bound to this turn's sources are numbered, others removed; every reply reaches
	// a terminal or a page: no control characters, whatever the stage.
	reply, cites := tr.bind(reply)
	reply = strings.TrimSpace(CleanControl(reply))
	if err != nil {
		s.opts.Logger.Warn("chat turn failed", "conversation", id, "pipeline", name, "err", err.Error())
		return TurnResponse{}, fmt.Errorf("conversation %s turn %d (%s): %w", id, len(conv.Turns), name, err)
	}
	// The last gate, whatever the pipeline: an oversized reply, or one carrying a stage's
	// format lines, is neither delivered nor stored. The pipelines' parsers already refuse
	// both; this holds for a pipeline that forgets to.
	if l, bad := stageFormatLine(reply); bad || len(reply) > MaxReplyBytes {
		s.opts.Logger.Warn("chat reply refused", "conversation", id, "pipeline", name, "bytes", len(reply), "format_line", truncate(l, 80))
		reply, cites = DefaultNoReply, nil
	}
	turn := Turn{
		Index: conv.Dropped + len(conv.Turns), Pipeline: name, User: msg, Bot: reply, Time: start.UTC(),
		Duration: time.Since(start), Stages: tr.Stages(), Passages: tr.Passages(), Citations: cites, Usage: tr.Usage(),
		Grounded: p.Grounded(),
	}
	conv.Turns = append(conv.Turns, turn)
	conv.Usage = conv.Usage.Add(turn.Usage)
	if err := h.save(); err != nil {
		return TurnResponse{}, err
	}
	if err := s.writeTranscript(id, turn); err != nil {
		return TurnResponse{}, err
	}
	switch {
	case tr.onToken == nil:
	case tr.sentText() == "":
		for _, piece := range splitKeep(reply) {
			tr.onToken(piece)
		}
	case tr.sentText() != reply:
		// What streamed cannot be taken back; the client is told it is replaced.
		s.opts.Logger.Info("streamed chat reply replaced", "conversation", id, "pipeline", name,
			"streamed_bytes", len(tr.sentText()), "reply_bytes", len(reply))
		if stream.Replace != nil {
			stream.Replace(reply)
		}
	}
	return TurnResponse{ConversationID: id, Response: reply, Turn: turn, ConversationUsage: conv.Usage}, nil
}

// respond runs the pipeline, turning a panic into an error so that one bad turn cannot take
// down a server holding many conversations.
func respond(ctx context.Context, p Pipeline, conv *Conversation, msg string, tr *Tracer) (reply string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pipeline %s panicked: %v", p.Name(), r)
		}
	}()
	return p.Respond(ctx, conv, msg, tr)
}

// Conversation returns the state of a conversation of the local user (owner "").
func (s *Service) Conversation(id string) (Conversation, bool, error) {
	c, err := s.opts.Store.Get("", id)
	if errors.Is(err, ErrConversationNotFound) {
		return Conversation{}, false, nil
	}
	return c, err == nil, err
}

// OwnedConversation returns owner's conversation id, or ErrConversationNotFound.
func (s *Service) OwnedConversation(owner, id string) (Conversation, error) {
	return s.opts.Store.Get(owner, id)
}

// DeleteConversation deletes owner's conversation id, or returns ErrConversationNotFound.
func (s *Service) DeleteConversation(owner, id string) error {
	return s.opts.Store.Delete(owner, id)
}

// TranscriptLine is one line of a JSONL transcript.
type TranscriptLine struct {
	ConversationID string `json:"conversation_id"`
	Turn
}

func (s *Service) writeTranscript(id string, t Turn) error {
	if s.opts.Transcript == nil {
		return nil
	}
	b, err := json.Marshal(TranscriptLine{ConversationID: id, Turn: t})
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if _, err := s.opts.Transcript.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing transcript: %w", err)
	}
	return nil
}

// splitKeep splits s after each space, so that the pieces concatenate back to s.
func splitKeep(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return slices.Clip(out)
}
