package chat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

func chitChatService(t testing.TB, transcript *bytes.Buffer) (*chat.Service, *chattest.Server) {
	script := wikiScript{query: "Search: no\nQuery: none\nTime: none", generate: "Hello! Lovely to meet you today.", claims: "None"}
	llm := chattest.NewServer(script.answer, 0)
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	tpl, _ := chat.LoadTemplates("")
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: chattest.NewRetriever(nil)}, chat.WikiChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}}
	if transcript != nil {
		opts.Transcript = transcript
	}
	svc, err := chat.NewService(opts)
	if err != nil {
		t.Fatal(err)
	}
	return svc, llm
}

func TestServiceTranscriptTokensAndErrors(t *testing.T) {
	var transcript bytes.Buffer
	svc, llm := chitChatService(t, &transcript)
	defer llm.Close()
	ctx := context.Background()

	var pieces []string
	resp, err := svc.Turn(ctx, chat.TurnRequest{Message: "  Hi!  "}, &chat.Stream{Token: func(s string) { pieces = append(pieces, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 2 || strings.Join(pieces, "") != resp.Response {
		t.Errorf("streamed pieces %q do not rebuild %q", pieces, resp.Response)
	}
	if len(resp.ConversationID) != 26 { // 128 bits in base32
		t.Errorf("new conversation id %q", resp.ConversationID)
	}
	if _, err := svc.Turn(ctx, chat.TurnRequest{ConversationID: resp.ConversationID, Message: "How are you?"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&transcript)
	var lines []chat.TranscriptLine
	for sc.Scan() {
		var l chat.TranscriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("transcript line %d: %v", len(lines)+1, err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 || lines[0].User != "Hi!" || lines[1].Index != 1 || lines[1].ConversationID != resp.ConversationID ||
		len(lines[1].Stages) == 0 || lines[1].Usage.Calls == 0 {
		t.Errorf("transcript %+v", lines)
	}

	bad := []chat.TurnRequest{
		{Message: "   "},
		{Message: strings.Repeat("x", 9000)},
		{Message: "hi", Pipeline: "nope"},
		{Message: "hi", ConversationID: "../../etc/passwd"},
		{Message: "bad \xff utf8"},
	}
	for _, req := range bad {
		if _, err := svc.Turn(ctx, req, nil); !errors.Is(err, chat.ErrBadRequest) {
			t.Errorf("Turn(%+v) err = %v, want ErrBadRequest", req, err)
		}
	}
}

func TestServiceSerialisesTurnsOfOneConversation(t *testing.T) {
	svc, llm := chitChatService(t, nil)
	defer llm.Close()
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "same", Message: "hello"}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	conv, _, _ := svc.Conversation("same")
	for i, tr := range conv.Turns {
		if tr.Index != i {
			t.Fatalf("turn %d has index %d: concurrent turns interleaved", i, tr.Index)
		}
	}
	if len(conv.Turns) != 6 {
		t.Errorf("%d turns, want 6", len(conv.Turns))
	}
}

func TestServiceLLMDownFailsTurn(t *testing.T) {
	tpl, _ := chat.LoadTemplates("")
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: -1, Timeout: time.Second})
	wc, _ := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: chattest.NewRetriever(nil)}, chat.WikiChatOptions{})
	store, _ := chat.OpenStore(chat.StoreOptions{})
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}, Store: store})
	_, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "down", Message: "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "conversation down turn 0 (wikichat)") {
		t.Fatalf("err = %v", err)
	}
	if store.Len() != 0 {
		t.Errorf("a conversation whose first turn failed is kept (%d)", store.Len())
	}
	if conv, _, _ := svc.Conversation("down"); len(conv.Turns) != 0 {
		t.Error("a failed turn was recorded")
	}
}

// ExampleService_Turn runs one wikichat turn against a scripted OpenAI-compatible server.
func ExampleService_Turn() {
	script := wikiScript{query: "Search: no\nQuery: none\nTime: none", generate: "Hello! Lovely to meet you.", claims: "None"}
	llm := chattest.NewServer(script.answer, 0)
	defer llm.Close()

	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "any", APIKeyEnv: "OPENAI_API_KEY"})
	tpl, _ := chat.LoadTemplates("") // embedded prompts; pass a directory to override some
	wc, _ := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: chattest.NewRetriever(nil)}, chat.WikiChatOptions{})
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})

	resp, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "demo", Message: "Hi!"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.ConversationID, resp.Response)
	var called []string // stages 1 and 3 run in parallel: sort for a stable listing
	for _, s := range resp.Turn.Stages {
		if s.Calls > 0 {
			called = append(called, s.Stage)
		}
	}
	slices.Sort(called)
	fmt.Println(called)
	// Output:
	// demo Sorry, I'm not sure about that. Anything else?
	// [claims generate query refine]
}

func TestStoreGetUnknownAndPersisted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	store, err := chat.OpenStore(chat.StoreOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(context.Background(), "", "nobody"); !errors.Is(err, chat.ErrConversationNotFound) {
		t.Errorf("unknown id: err=%v", err)
	}
	if _, err := store.Get(context.Background(), "", "bad/id"); !errors.Is(err, chat.ErrBadConversationID) {
		t.Errorf("bad id: %v", err)
	}
	// A conversation file written by one store is read by another.
	script := wikiScript{query: "Search: no\nQuery: none\nTime: none", generate: "Hi!", claims: "None"}
	llm2 := chattest.NewServer(script.answer, 0)
	defer llm2.Close()
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm2.BaseURL(), Model: "fake"})
	tpl, _ := chat.LoadTemplates("")
	wc, _ := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: chattest.NewRetriever(nil)}, chat.WikiChatOptions{})
	svc2, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}, Store: store})
	if _, err := svc2.Turn(context.Background(), chat.TurnRequest{ConversationID: "kept", Message: "hello"}, nil); err != nil {
		t.Fatal(err)
	}
	store.Close()
	other, err := chat.OpenStore(chat.StoreOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conv, err := other.Get(context.Background(), "", "kept")
	if err != nil || len(conv.Turns) != 1 || conv.Turns[0].User != "hello" {
		t.Errorf("persisted conversation: %+v err=%v", conv, err)
	}
}
