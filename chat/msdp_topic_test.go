package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// MSDP's topic is an input of the dialogue (the paper, section 2: t beside the history h; WoW
// gives each dialogue its chosen topic): Kairos takes it from the first turn that names one,
// the title of the passage the index finds for it (WoW's topics are Wikipedia titles) or,
// without an index, its content words, keeps it in the conversation, and gives it to every
// later turn unchanged, whatever those turns say. A turn that names nothing ("hi", "thanks")
// before then leaves the dialogue without a topic, as the paper's "w/o topic" input.
func TestMSDPTopicIsTheDialoguesAndStays(t *testing.T) {
	const frozen = "Frozen (2013 film)"
	tests := []struct {
		name  string
		index bool
		turns []string
		want  []string // the topic each turn's prompts carry
	}{
		{"from the index, kept", true,
			[]string{"have you seen the animated film Frozen by Walt Disney Animation Studios", "thanks", "what do you know about the Oscars"},
			[]string{frozen, frozen, frozen}},
		{"a greeting names none", true,
			[]string{"hi there!", "have you seen the animated film Frozen by Walt Disney Animation Studios", "ok thanks"},
			[]string{"", frozen, frozen}},
		{"without an index, the first turn's words", false,
			[]string{"do you like football games", "thanks", "what about cooking"},
			[]string{"football games", "football games", "football games"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := chat.HashEncoder{Dim: 256}
			deps, llm := newBankDeps(t, func(stage string, _ []chat.Message) string {
				if stage == chat.StageMSDPKnow {
					return "Frozen is a 2013 animated film."
				}
				return "I loved it!"
			}, selectionBank(t, enc), enc)
			if tt.index {
				deps.Retriever = chattest.NewRetriever(loadLeads(t))
			}
			p, err := chat.NewMSDP(deps, chat.MSDPOptions{KnowledgeExamples: 2, ResponseExamples: 2})
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
			for i, msg := range tt.turns {
				resp, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "c", Message: msg}, nil)
				if err != nil {
					t.Fatal(err)
				}
				var sel struct {
					Topic  string `json:"topic"`
					Source string `json:"topic_source"`
				}
				if err := json.Unmarshal(resp.Turn.Stages[0].Output, &sel); err != nil {
					t.Fatal(err)
				}
				if sel.Topic != tt.want[i] || sel.Source == "" {
					t.Errorf("turn %d %q: topic %q (%s), want %q", i, msg, sel.Topic, sel.Source, tt.want[i])
				}
				// The live line of both prompts carries it: "( turn ) topic =>" and "topic User: turn".
				live := tt.want[i]
				if i > 0 {
					live += " System: I loved it!"
				}
				live = strings.TrimSpace(live + " User: " + msg + " We know that:")
				know, rp := lastPrompt(llm, chat.StageMSDPKnow), lastPrompt(llm, chat.StageMSDPResp)
				if !strings.HasSuffix(strings.TrimSpace(know), strings.TrimSpace("( "+msg+" ) "+tt.want[i])+" =>") || !strings.HasPrefix(lastLine(rp), live) {
					t.Errorf("turn %d: the prompts do not carry the topic %q:\n%s\n%s", i, tt.want[i], lastLine(know), lastLine(rp))
				}
				conv, _, _ := svc.Conversation("c")
				if conv.Topic != tt.want[i] {
					t.Errorf("turn %d: the conversation keeps the topic %q, want %q", i, conv.Topic, tt.want[i])
				}
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
