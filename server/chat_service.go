package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/corpus/timex"
)

// ChatService serves POST /v1/chat and GET and DELETE /v1/chat/{id} with a chat.Service whose
// conversations are bound to their owner (ChatRequest.Owner). Build the service with
// ServerIDs set, so that clients never choose conversation ids.
type ChatService struct {
	svc   *chat.Service
	store *chat.Store
}

var (
	_ Chatter             = ChatService{}
	_ PipelineLister      = ChatService{}
	_ ConversationDeleter = ChatService{}
	_ ConversationGetter  = ChatService{}
	_ StoreStatser        = ChatService{}
)

// NewChatService adapts svc. store, when not nil, is the store svc keeps its conversations
// in: /metrics then reports its counts and evictions.
func NewChatService(svc *chat.Service, store *chat.Store) ChatService { return ChatService{svc, store} }

// StoreStats returns the store's counts (zero without a store).
func (a ChatService) StoreStats() chat.StoreStats {
	if a.store == nil {
		return chat.StoreStats{}
	}
	return a.store.Stats()
}

// GetConversation returns owner's conversation id; another owner's is ErrNotFound.
func (a ChatService) GetConversation(ctx context.Context, owner, id string) (ChatConversation, error) {
	c, err := a.svc.OwnedConversation(ctx, owner, id)
	if errors.Is(err, chat.ErrBadConversationID) {
		err = chat.ErrConversationNotFound // not one of ours either: the same answer
	}
	if err != nil {
		return ChatConversation{}, chatErr(err)
	}
	out := ChatConversation{Conversation: c.ID, Created: c.Created.UTC().Format(time.RFC3339), Turns: make([]ChatTurn, len(c.Turns)),
		DroppedTurns: c.Dropped, Usage: chatUsage(c.Usage)}
	for i, t := range c.Turns {
		out.Turns[i] = ChatTurn{Index: t.Index, Time: t.Time.UTC().Format(time.RFC3339), Pipeline: t.Pipeline, User: t.User,
			Reply: t.Bot, Citations: chatCitations(t.Citations), Grounded: t.Grounded}
	}
	return out, nil
}

// chatCitations are a turn's citations as the API reports them: only http(s) URLs.
func chatCitations(ps []chat.PassageRef) []ChatCitation {
	out := make([]ChatCitation, 0, len(ps))
	for _, p := range ps {
		out = append(out, ChatCitation{N: p.N, PassageID: p.ID, Title: p.Title, Section: p.Section, URL: webURL(p.URL), Facts: p.Facts})
	}
	return out
}

// Pipelines lists the pipeline names, default first.
func (a ChatService) Pipelines() []string { return a.svc.Pipelines() }

// DeleteConversation deletes owner's conversation id; another owner's is ErrNotFound.
func (a ChatService) DeleteConversation(ctx context.Context, owner, id string) error {
	if err := a.svc.DeleteConversation(owner, id); err != nil {
		return chatErr(err)
	}
	return nil
}

// errNoConversation is the one answer for a conversation the caller may not see: unknown,
// expired, evicted, deleted, another owner's, or asked for with a session token the server
// did not issue. One message for all, without the id, so that no two of them read apart.
var errNoConversation = &apiError{status: http.StatusNotFound, msg: "no such conversation"}

// chatErr maps the chat layer's errors to the server's: a request error is a 400, and an
// unknown conversation a 404, whether it never existed or is another owner's.
func chatErr(err error) error {
	switch {
	case errors.Is(err, chat.ErrConversationNotFound):
		return errNoConversation
	case errors.Is(err, chat.ErrBadRequest):
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return err
}

// Chat runs one turn.
func (a ChatService) Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error) {
	if req.Time != "" {
		// The pipelines decide the time need themselves (WikiChat's query stage); a spec
		// given here would be silently ignored, so it is refused instead.
		if _, err := timex.Parse(req.Time); err != nil {
			return ChatResponse{}, fmt.Errorf("%w: time: %v", ErrInvalid, err)
		}
		return ChatResponse{}, fmt.Errorf("%w: time: chat pipelines infer the time need from the dialogue; leave time empty", ErrInvalid)
	}
	var st *chat.Stream
	if stream != nil {
		st = &chat.Stream{Token: stream.Token}
	}
	resp, err := a.svc.Turn(ctx, chat.TurnRequest{ConversationID: req.Conversation, Owner: req.Owner, Message: req.Message, Pipeline: req.Pipeline}, st)
	if err != nil {
		return ChatResponse{}, chatErr(err)
	}
	// The passages the reply's [N] markers cite (else those it was built from), each once
	// (Turn.Citations); everything retrieved stays in the trace.
	out := ChatResponse{Conversation: resp.ConversationID, Reply: resp.Response, Citations: chatCitations(resp.Turn.Citations),
		Grounded: resp.Turn.Grounded, Pipeline: resp.Turn.Pipeline, Usage: chatUsage(resp.Turn.Usage), ConversationUsage: chatUsage(resp.ConversationUsage)}
	for _, d := range resp.Turn.Dropped {
		if out.Dropped == nil {
			out.Dropped = map[string]int{}
		}
		out.Dropped[d.Stage]++
	}
	if len(resp.Turn.Stages) > 0 {
		out.Stages = make(map[string]any, len(resp.Turn.Stages))
		for _, st := range resp.Turn.Stages {
			output := webURLsOnly(st.Output)
			out.Stages[st.Stage] = output
			out.Trace = append(out.Trace, ChatStage{Stage: st.Stage, StartMS: ms(st.Start),
				DurationMS: ms(st.Duration), LLMMS: ms(st.LLMTime), Calls: st.Calls,
				Usage: chatUsage(st.Usage), Output: output, Errors: st.Errors})
		}
	}
	return out, nil
}

// webURLsOnly blanks every "url" of a stage's output that is not an http(s) URL: a stage may
// put passages in its output, and only such URLs leave the server.
func webURLsOnly(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"url"`)) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "url" {
					x[k] = webURL(s)
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// chatUsage is u as the API reports it; nil when no LLM call was made.
func chatUsage(u chat.Usage) *ChatUsage {
	if u.Calls == 0 {
		return nil
	}
	return &ChatUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		Calls: u.Calls, EstimatedCalls: u.EstimatedCalls, Cost: u.Cost}
}
