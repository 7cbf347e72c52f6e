package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	// MaxReplyTokens bounds a reply: it ends at the last whole sentence within this many
	// tokens (four bytes a token), whatever the LLM wrote; 0: MaxReplyBytes alone. Commands
	// set it to their --max-tokens.
	MaxReplyTokens int
	Logger         *slog.Logger // default: discard
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

// Stream receives a turn's reply as it is decided: Token gets each sentence (with the space
// or newline before it) once it has passed the turn's checks, and the pieces concatenate to
// TurnResponse.Response. Nothing sent is ever taken back.
type Stream struct {
	Token func(piece string)
}

// Turn runs one turn. stream, when not nil, receives the reply as it is decided: every pipeline
// streams its last LLM stage as the LLM writes it (wikichat: the refinement's revised response,
// or the draft when refine is skipped; commonsense: its response; mpc, msdp and sicl: their
// reply), each sentence once it is complete and has passed the reply's gate; a fallback ("I'm
// not sure") is sent whole.
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
	h, err := s.opts.Store.acquire(ctx, req.Owner, id, create)
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
	tr.maxReplyBytes = 4 * s.opts.MaxReplyTokens // estimateTokens' four bytes a token
	if stream != nil && stream.Token != nil {
		tr.onToken = stream.Token
	}
	reply, err := respond(ctx, p, conv, msg, tr)
	if err != nil {
		s.opts.Logger.Warn("chat turn failed", "conversation", id, "pipeline", name, "err", err.Error())
		return TurnResponse{}, fmt.Errorf("conversation %s turn %d (%s): %w", id, len(conv.Turns), name, err)
	}
	// The reply is what the turn's gate sent, sentence by sentence (replygate.go); a pipeline
	// whose LLM text gave none answers with its own fallback, which is sent whole.
	g := tr.replyGate()
	if g.text() == "" {
		g.sendFixed(CleanControl(reply))
	}
	reply, cites := tr.reply()
	turn := Turn{
		Index: conv.Dropped + len(conv.Turns), Pipeline: name, User: msg, Bot: reply, Time: start.UTC(),
		Duration: time.Since(start), Stages: tr.Stages(), Passages: tr.Passages(), Citations: cites, Usage: tr.Usage(),
		Grounded: p.Grounded(), Dropped: tr.Dropped(),
	}
	conv.Turns = append(conv.Turns, turn)
	conv.Usage = conv.Usage.Add(turn.Usage)
	if err := h.save(); err != nil {
		return TurnResponse{}, err
	}
	if err := s.writeTranscript(id, turn); err != nil {
		return TurnResponse{}, err
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
	c, err := s.opts.Store.Get(context.Background(), "", id)
	if errors.Is(err, ErrConversationNotFound) {
		return Conversation{}, false, nil
	}
	return c, err == nil, err
}

// OwnedConversation returns owner's conversation id, or ErrConversationNotFound; it waits for
// the conversation's turn in progress until ctx ends.
func (s *Service) OwnedConversation(ctx context.Context, owner, id string) (Conversation, error) {
	return s.opts.Store.Get(ctx, owner, id)
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
