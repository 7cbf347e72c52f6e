package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// mpcWith runs turns of an MPC conversation whose summarizer answers summary (called with the
// summarizer's prompt), and returns the service and the LLM.
func mpcWith(t *testing.T, every int, summary func(prompt string) string, turns ...string) (*chat.Service, *chattest.Server) {
	t.Helper()
	llm := chattest.NewServer(func(stage string, msgs []chat.Message) string {
		if stage == chat.StageMPCSummary {
			return summary(chattest.LastUser(msgs))
		}
		return mpcScript(stage, msgs)
	}, 0)
	t.Cleanup(llm.Close)
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	tpl, _ := chat.LoadTemplates("")
	p, err := chat.NewMPC(chat.Deps{LLM: client, Templates: tpl, Encoder: chat.HashEncoder{Dim: 256}}, chat.MPCOptions{TopK: 2, SummaryEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
	for _, m := range turns {
		if _, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "m", Message: m}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return svc, llm
}

// A memory fact in the first person reads like the bot's persona ("I have a cat named Miso")
// when it is recalled: the summarizer's "User: I have a dog" is refused, its third-person
// facts are kept.
func TestMPCRefusesFirstPersonFacts(t *testing.T) {
	tests := []struct {
		name, summary string
		refused       string // in no memory
		kept          string // a memory
	}{
		{"fact in the user's words", "User: I have a dog named Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"repeated speaker label", "User: User: I have a dog named Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"my", "User: My dog is named Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"contraction", "User: I'm a nurse at the Rex clinic.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"bot fact in the first person", "Bot: I own a dog named Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"we", "User: We adopted a dog named Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"the US is no pronoun", "User: The user moved to the US from Oslo.", "", "The user moved to the US from Oslo."},
		{"a film called Despicable Me", "User: The user's favourite film is Despicable Me.", "", "The user's favourite film is Despicable Me."},
		{"a film called My Neighbor Totoro", "User: The user's favourite film is My Neighbor Totoro.", "", "The user's favourite film is My Neighbor Totoro."},
		{"a film called Call Me by Your Name", "User: The user cried at Call Me by Your Name.", "", "The user cried at Call Me by Your Name."},
		{"type I diabetes", "User: The user has type I diabetes.", "", "The user has type I diabetes."},
		{"a band called We Are Scientists", "User: The user likes We Are Scientists.", "", "The user likes We Are Scientists."},
		{"a grandfather in World War I", "User: The user's grandfather fought in World War I.", "", "The user's grandfather fought in World War I."},
		{"a film called I, Tonya", "User: The user's favourite film is I, Tonya.", "", "The user's favourite film is I, Tonya."},
		{"a quoted title", "User: The user sings \"we will rock you\" loudly.", "", "The user sings \"we will rock you\" loudly."},
		{"I inside a fact", "User: The user said I should meet Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"me inside a fact", "User: The user told me about a dog named Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
		{"our inside a fact", "User: The user walks our dog Rex.\nUser: The user lives in Oslo.", "Rex", "The user lives in Oslo."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := mpcWith(t, 1, func(string) string { return tt.summary }, "I have a dog named Rex and I live in Oslo.")
			conv, _, _ := svc.Conversation("m")
			kept := false
			for _, it := range conv.Memory {
				if it.About != "persona" && tt.refused != "" && strings.Contains(it.Text, tt.refused) {
					t.Errorf("memory pool holds the first-person fact %q", it.Text)
				}
				kept = kept || it.Text == tt.kept
			}
			if !kept {
				t.Errorf("the third-person fact %q was lost", tt.kept)
			}
		})
	}
}

// A summarizer that keeps failing reads at most 3 × SummaryEvery turns, not every turn since
// it last succeeded: its window must not grow with the conversation.
func TestMPCSummaryWindowIsBounded(t *testing.T) {
	for _, every := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(every), func(t *testing.T) {
			var turns []string
			for i := range 12 {
				turns = append(turns, fmt.Sprintf("message number %d", i+1))
			}
			var prompts []string
			_, _ = mpcWith(t, every, func(p string) string {
				prompts = append(prompts, p)
				return "The conversation is about numbers." // unusable: no fact lines and no None
			}, turns...)
			if len(prompts) == 0 {
				t.Fatal("the summarizer never ran")
			}
			last := prompts[len(prompts)-1]
			_, live, _ := strings.Cut(last[strings.LastIndex(last, "Conversation:"):], "Conversation:")
			n := strings.Count(live, "User: ")
			if n > 3*every {
				t.Errorf("the last summarizer call read %d turns, want at most %d", n, 3*every)
			}
			if !strings.Contains(live, "message number 12") {
				t.Errorf("the last summarizer call lacks the latest turn:\n%s", live)
			}
		})
	}
}
