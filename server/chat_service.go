package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/corpus/timex"
)

// ChatService serves POST and DELETE /v1/chat with a chat.Service whose conversations are
// bound to their owner (ChatRequest.Owner). Build the service with ServerIDs set, so that
// clients never choose conversation ids.
type ChatService struct{ svc *chat.Service }

var (
	_ Chatter             = ChatService{}
	_ PipelineLister      = ChatService{}
	_ ConversationDeleter = ChatService{}
)

// NewChatService adapts svc.
func NewChatService(svc *chat.Service) ChatService { return ChatService{svc} }

// Pipelines lists the pipeline names, default first.
func (a ChatService) Pipelines() []string { return a.svc.Pipelines() }

// DeleteConversation deletes owner's conversation id; another owner's is ErrNotFound.
func (a ChatService) DeleteConversation(ctx context.Context, owner, id string) error {
	if err := a.svc.DeleteConversation(owner, id); err != nil {
		return chatErr(err)
	}
	return nil
}

// chatErr maps the chat layer's errors to the server's: a request error is a 400, and an
// unknown conversation a 404, whether it never existed or is another owner's.
func chatErr(err error) error {
	switch {
	case errors.Is(err, chat.ErrConversationNotFound):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
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
	out := ChatResponse{Conversation: resp.ConversationID, Reply: resp.Response, Citations: []ChatCitation{},
		Pipeline: resp.Turn.Pipeline, Usage: chatUsage(resp.Turn.Usage), ConversationUsage: chatUsage(resp.ConversationUsage)}
	// The passages the reply's [N] markers cite (else those it was built from), each once
	// (Turn.Citations); everything retrieved stays in the trace.
	for _, p := range resp.Turn.Citations {
		out.Citations = append(out.Citations, ChatCitation{N: p.N, PassageID: p.ID, Title: p.Title, Section: p.Section, URL: p.URL, Facts: p.Facts})
	}
	if len(resp.Turn.Stages) > 0 {
		out.Stages = make(map[string]any, len(resp.Turn.Stages))
		for _, st := range resp.Turn.Stages {
			out.Stages[st.Stage] = json.RawMessage(st.Output)
			out.Trace = append(out.Trace, ChatStage{Stage: st.Stage, StartMS: ms(st.Start),
				DurationMS: ms(st.Duration), LLMMS: ms(st.LLMTime), Calls: st.Calls,
				Usage: chatUsage(st.Usage), Output: st.Output, Errors: st.Errors})
		}
	}
	return out, nil
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
