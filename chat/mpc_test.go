package chat_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// mpcScript plays MPC's LLM: the clarifier resolves the turn from the history shown to it,
// the memory processor echoes the first retrieved memory, the summarizer extracts the move.
func mpcScript(stage string, msgs []chat.Message) string {
	p := chattest.LastUser(msgs)
	switch stage {
	case chat.StageMPCClarify:
		last := p[strings.LastIndex(p, "User: ")+len("User: "):]
		if strings.Contains(last, "Where do I live") && strings.Contains(p, "Lisbon") {
			return "Clarified: Where do I live now, after the move to Lisbon?" // resolved from the history
		}
		return "Clarified: " + strings.TrimSpace(last)
	case chat.StageMPCMemory:
		// Memories come as untrusted blocks, after the few-shot examples' own.
		_, live, _ := strings.Cut(p, "User turn:")
		first := ""
		if mems := untrustedBlocks(live); len(mems) > 0 {
			first = mems[0]
		}
		return "Reasoning: the first memory is the relevant one.\nMemory: " + first
	case chat.StageMPCRespond:
		mem := ""
		if b := untrustedBlocks(p); len(b) > 0 {
			mem = b[0]
		}
		return "Bot: Based on what I remember: " + mem
	case chat.StageMPCSummary:
		if strings.Contains(p, "Lisbon") {
			return "User: The user moved to Lisbon.\nUser: The user works at a bakery.\nBot: none"
		}
		return "None"
	}
	return "unexpected " + stage
}

func newMPCService(t *testing.T, storeDir string, llm *chattest.Server) (*chat.Service, *chat.Store) {
	t.Helper()
	client, err := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := chat.LoadTemplates("")
	p, err := chat.NewMPC(chat.Deps{LLM: client, Templates: tpl, Encoder: chat.HashEncoder{Dim: 1024}}, chat.MPCOptions{TopK: 2, SummaryEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	store, err := chat.OpenStore(chat.StoreOptions{Path: filepath.Join(storeDir, "chat.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store
}

func TestMPCSummarizerWritesMemoryLaterTurnsRecallIt(t *testing.T) {
	llm := chattest.NewServer(mpcScript, 0)
	defer llm.Close()
	dir := t.TempDir()
	svc, store := newMPCService(t, dir, llm)
	ctx := context.Background()
	for i, msg := range []string{"I just moved to Lisbon for a job at a bakery.", "The bread here is great.", "I'm tired today."} {
		resp, err := svc.Turn(ctx, chat.TurnRequest{ConversationID: "lisbon", Message: msg}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		for _, s := range resp.Turn.Stages {
			ran = ran || s.Stage == chat.StageMPCSummary
		}
		if ran != (i == 2) {
			t.Errorf("turn %d: summarizer ran = %v, want only on turn 3", i+1, ran)
		}
	}
	conv, _, err := svc.Conversation("lisbon")
	if err != nil {
		t.Fatal(err)
	}
	var facts []string
	for _, m := range conv.Memory {
		if m.About == "user" {
			facts = append(facts, m.Text)
		}
	}
	if strings.Join(facts, "|") != "The user moved to Lisbon.|The user works at a bakery." || conv.SummarizedThrough != 3 {
		t.Fatalf("memory pool %+v", conv.Memory)
	}

	// A new service over the same store (a restart) recalls the persisted memory.
	store.Close()
	svc2, _ := newMPCService(t, dir, llm)
	resp, err := svc2.Turn(ctx, chat.TurnRequest{ConversationID: "lisbon", Message: "Where do I live?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Response != "Based on what I remember: The user moved to Lisbon." {
		t.Errorf("response %q", resp.Response)
	}
	var recall []struct{ Text, About string }
	for _, s := range resp.Turn.Stages {
		if s.Stage == chat.StageMPCRecall {
			if err := json.Unmarshal(s.Output, &recall); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(recall) != 2 || recall[0].Text != "The user moved to Lisbon." {
		t.Errorf("recall %+v", recall)
	}
	if resp.Turn.Index != 3 {
		t.Errorf("turn index %d, want 3 (history persisted)", resp.Turn.Index)
	}
	// The persona is in the pool exactly once.
	conv, _, _ = svc2.Conversation("lisbon")
	n := 0
	for _, m := range conv.Memory {
		if m.About == "persona" {
			n++
		}
	}
	if n != len(chat.DefaultPersona()) {
		t.Errorf("%d persona memories, want %d", n, len(chat.DefaultPersona()))
	}
}
