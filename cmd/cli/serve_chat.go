package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/server"
)

// registerServeChat adds the flags of POST /v1/chat to serve. Without --llm-url the endpoint
// answers 501.
func registerServeChat(fs *flag.FlagSet, o *chatCLIOptions) {
	o.Client.ConnectionFlags(fs) // --llm-url, --llm-model, --llm-key-env, --llm-key-file
	fs.Lookup("llm-url").Usage += ", for POST /v1/chat (default: chat off)"
	fs.Lookup("llm-model").Usage += " for POST /v1/chat"
	fs.StringVar(&o.StateDir, "chat-state", "", "`directory` keeping conversations (and MPC memory); default: in memory")
	fs.StringVar(&o.Prompts, "prompts", "", "`directory` of .tmpl files overriding the embedded prompts")
	fs.StringVar(&o.Bank, "bank", "", "example bank `file`: enables the msdp and sicl pipelines")
}

// newServeChat builds the chat service of POST /v1/chat: wikichat (the default), commonsense
// and mpc, plus msdp and sicl when a bank is given. Retrieval goes through the server's live
// engine, so chat follows index reloads.
// indexEnc is the index's sentence encoder (serve --model), nil without one.
func newServeChat(ctx context.Context, o chatCLIOptions, retrieve chat.RetrieverFunc, indexEnc chat.Encoder, log *slog.Logger) (server.Chatter, error) {
	if o.Client.BaseURL == "" && o.Client.Model == "" {
		return nil, nil
	}
	if o.Client.BaseURL == "" || o.Client.Model == "" {
		return nil, fmt.Errorf("chat needs both --llm-url and --llm-model: %w", ErrUsage)
	}
	enc, err := chatEncoder(ctx, o, indexEnc)
	if err != nil {
		return nil, err
	}
	if _, hashed := enc.(chat.HashEncoder); hashed {
		log.Warn(hashMemoryNote)
	}
	names := []string{"wikichat", "commonsense", "mpc"}
	if o.Bank != "" {
		names = append(names, "msdp", "sicl")
	}
	svc, err := newChatService(o, names, retrieve, enc, nil, log)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return chatAdapter{svc}, nil
}

// chatAdapter serves server.ChatRequest with a chat.Service.
type chatAdapter struct{ svc *chat.Service }

var (
	_ server.Chatter        = chatAdapter{}
	_ server.PipelineLister = chatAdapter{}
)

func (a chatAdapter) Pipelines() []string { return a.svc.Pipelines() }

func (a chatAdapter) Chat(ctx context.Context, req server.ChatRequest, onToken func(string)) (server.ChatResponse, error) {
	if req.Time != "" {
		// The pipelines decide the time need themselves (WikiChat's query stage); a spec
		// given here would be silently ignored, so it is refused instead.
		if _, err := timex.Parse(req.Time); err != nil {
			return server.ChatResponse{}, fmt.Errorf("%w: time: %v", server.ErrInvalid, err)
		}
		return server.ChatResponse{}, fmt.Errorf("%w: time: chat pipelines infer the time need from the dialogue; leave time empty", server.ErrInvalid)
	}
	resp, err := a.svc.Turn(ctx, chat.TurnRequest{ConversationID: req.Conversation, Message: req.Message, Pipeline: req.Pipeline}, onToken)
	if errors.Is(err, chat.ErrBadRequest) {
		return server.ChatResponse{}, fmt.Errorf("%w: %v", server.ErrInvalid, err)
	}
	if err != nil {
		return server.ChatResponse{}, err
	}
	out := server.ChatResponse{Conversation: resp.ConversationID, Reply: resp.Response, Citations: []server.ChatCitation{}}
	// Only the passages the reply was built from, each once (Turn.Citations); everything
	// retrieved stays in the trace.
	for _, p := range resp.Turn.Citations {
		out.Citations = append(out.Citations, server.ChatCitation{PassageID: p.ID, Title: p.Title})
	}
	if len(resp.Turn.Stages) > 0 {
		out.Stages = make(map[string]any, len(resp.Turn.Stages))
		for _, st := range resp.Turn.Stages {
			out.Stages[st.Stage] = json.RawMessage(st.Output)
			out.Trace = append(out.Trace, server.ChatStage{Stage: st.Stage, StartMS: ms(st.Start),
				DurationMS: ms(st.Duration), LLMMS: ms(st.LLMTime), Calls: st.Calls,
				Output: st.Output, Errors: st.Errors})
		}
	}
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// serverRetriever adapts the server's live engine to chat's retriever.
func serverRetriever(s **server.Server) chat.RetrieverFunc {
	return func(ctx context.Context, q rerank.Query) (rerank.Result, error) {
		return (*s).Search(ctx, q)
	}
}
