package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// The honest content of each stage, which a generic chat model dresses (chattest.Generic).
const (
	genClarified = "Does the bot have any pets?"
	genMemory    = "I have a cat named Miso."
	genMPCReply  = "I do! I have a cat named Miso. Do you have any pets?"
	genSummary   = "The user asked about the bot's pets."
	genKnowledge = "Football is a family of team sports that involve kicking a ball."
	genMSDPReply = "I love football! It is a team sport where you kick a ball."
	genSICLReply = "Sure, I watch every weekend with friends."
)

func genericBase(stage string, _ []chat.Message) string {
	switch stage {
	case chat.StageMPCClarify:
		return "Clarified: " + genClarified
	case chat.StageMPCMemory:
		return "Reasoning: The user asks about pets, and only the cat memory is about pets.\nMemory: " + genMemory
	case chat.StageMPCRespond:
		return genMPCReply
	case chat.StageMPCSummary:
		return "User: " + genSummary
	case chat.StageMSDPKnow:
		return genKnowledge
	case chat.StageMSDPResp:
		return genMSDPReply
	case chat.StageSICL:
		return genSICLReply
	}
	return "unexpected " + stage
}

// mpc, msdp and sicl read a generic chat model's reply for its content, in every stage: a
// preamble, markdown, a label, a score line, a closing offer, quotes, and all of them at once
// give the same reply, streamed or not, as the bare answer, and the same text to the stages
// after (the clarified turn, the memory, the summarised fact, the knowledge).
func TestMPCMSDPSICLReadAGenericChatModel(t *testing.T) {
	pipelines := []struct {
		name, reply string
		build       func(chat.Deps) (chat.Pipeline, error)
		// check looks at what the earlier stages passed on.
		check func(t *testing.T, llm *chattest.Server, conv chat.Conversation)
	}{
		{"mpc", genMPCReply, func(d chat.Deps) (chat.Pipeline, error) { return chat.NewMPC(d, chat.MPCOptions{SummaryEvery: 1}) },
			func(t *testing.T, llm *chattest.Server, conv chat.Conversation) {
				if p := promptOf(t, llm, chat.StageMPCMemory); !strings.Contains(p, "User turn: "+genClarified+"\n") {
					t.Errorf("the memory processor did not get the clarified turn:\n%s", p)
				}
				if b := untrustedBlocks(lastPrompt(llm, chat.StageMPCRespond)); len(b) == 0 || b[len(b)-1] != genMemory {
					t.Errorf("the generator's memory %q, want %q", b, genMemory)
				}
				if !hasMemory(conv, genSummary) {
					t.Errorf("the summarised fact %q is not in the memory pool %+v", genSummary, conv.Memory)
				}
			}},
		{"msdp", genMSDPReply, func(d chat.Deps) (chat.Pipeline, error) {
			return chat.NewMSDP(d, chat.MSDPOptions{KnowledgeExamples: 2, ResponseExamples: 2})
		}, func(t *testing.T, llm *chattest.Server, _ chat.Conversation) {
			if p := lastPrompt(llm, chat.StageMSDPResp); !strings.Contains(p, "We know that: "+genKnowledge+" System replies:") {
				t.Errorf("the response prompt lacks the knowledge:\n%s", p)
			}
		}},
		{"sicl", genSICLReply, func(d chat.Deps) (chat.Pipeline, error) { return chat.NewSICL(d, chat.SICLOptions{}) }, nil},
	}
	for _, pl := range pipelines {
		for _, style := range chattest.GenericStyles {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", pl.name, style, stream), func(t *testing.T) {
					enc := chat.HashEncoder{Dim: 256}
					deps, llm := newBankDeps(t, chattest.Generic(style, genericBase), selectionBank(t, enc), enc)
					p, err := pl.build(deps)
					if err != nil {
						t.Fatal(err)
					}
					svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
					if err != nil {
						t.Fatal(err)
					}
					var streamed strings.Builder
					var sink *chat.Stream
					if stream {
						sink = &chat.Stream{Token: func(s string) { streamed.WriteString(s) }}
					}
					resp, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "c", Message: "do you like football games"}, sink)
					if err != nil {
						t.Fatal(err)
					}
					if resp.Response != pl.reply {
						t.Errorf("reply %q, want %q; notes %v", resp.Response, pl.reply, notes(resp.Turn))
					}
					if stream && streamed.String() != pl.reply {
						t.Errorf("streamed %q, want %q", streamed.String(), pl.reply)
					}
					if pl.check != nil {
						conv, _, _ := svc.Conversation("c")
						pl.check(t, llm, conv)
					}
				})
			}
		}
	}
}

// lastPrompt is the live (last) user message of the last call of a stage.
func lastPrompt(llm *chattest.Server, stage string) string {
	out := ""
	for _, c := range llm.Calls() {
		if c.Stage == stage {
			out = chattest.LastUser(c.Messages)
		}
	}
	return out
}

func hasMemory(conv chat.Conversation, text string) bool {
	for _, it := range conv.Memory {
		if it.Text == text {
			return true
		}
	}
	return false
}

// notes are the trace notes of a turn, by stage.
func notes(tr chat.Turn) []string {
	var out []string
	for _, st := range tr.Stages {
		for _, e := range st.Errors {
			out = append(out, st.Stage+": "+e)
		}
	}
	return out
}
