package chat_test

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// selectionBank is built so that, for the message "do you like football games", similarity
// ranks A > C > B > E > D (S-ICL, without the topic: A > B > C) and only B (0.625), E (0.67) and D (0.86) have a response/knowledge
// overlap inside [0.6, 0.9] (A copies its knowledge: 1.0; C barely uses it: 0.3).
func selectionBank(t *testing.T, enc chat.Encoder) *chat.Bank {
	t.Helper()
	exs := []chat.Example{
		{ID: "A", Topic: "Football", History: []string{"do you like football games"},
			Knowledge: "Football is a team sport played with a ball", Response: "Football is a team sport played with a ball"},
		{ID: "B", Topic: "Football", History: []string{"do you like football games at all"},
			Knowledge: "Football is a family of team sports that involve kicking a ball", Response: "yes football is a team sport with a ball"},
		{ID: "C", Topic: "Football", History: []string{"do you like football"},
			Knowledge: "Football is played in many countries", Response: "not really, I prefer to watch tennis on weekends"},
		{ID: "D", Topic: "Baseball", History: []string{"have you played baseball"},
			Knowledge: "Baseball is a bat and ball game played between two teams", Response: "baseball is a sport between two teams"},
		{ID: "E", Topic: "Cooking", History: []string{"what do you cook"},
			Knowledge: "Cooking is the art of preparing food for eating with heat", Response: "I like the art of preparing food with friends"},
	}
	var b strings.Builder
	for _, e := range exs {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	bank, _, err := chat.BuildBank(context.Background(), strings.NewReader(b.String()), "selection.jsonl", enc, chat.BankBuildOptions{Encoder: "hash"})
	if err != nil {
		t.Fatal(err)
	}
	return bank
}

func TestOverlapRatio(t *testing.T) {
	tests := []struct {
		resp, know string
		want       float64
	}{
		{"Football is a team sport played with a ball", "Football is a team sport played with a ball", 1},
		{"yes football is a team sport with a ball", "Football is a family of team sports that involve kicking a ball", 6.0 / 9}, // "a" twice
		{"not really, I prefer to watch tennis on weekends", "Football is played in many countries", 0},
		{"baseball is a sport between two teams", "Baseball is a bat and ball game played between two teams", 6.0 / 7},
		{"I like the art of preparing food with friends", "Cooking is the art of preparing food for eating with heat", 6.0 / 9},
		{"", "anything", 0},
		{"the the the cat", "cat", 0.25}, // tokens, repeats counted: the paper's # overlap tokens / # response tokens
	}
	for _, tt := range tests {
		if got := chat.OverlapRatio(tt.resp, tt.know); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("OverlapRatio(%q, %q) = %v, want %v", tt.resp, tt.know, got, tt.want)
		}
	}
}

func newBankDeps(t *testing.T, script chattest.Script, bank *chat.Bank, enc chat.Encoder) (chat.Deps, *chattest.Server) {
	t.Helper()
	llm := chattest.NewServer(script, 0)
	t.Cleanup(llm.Close)
	client, err := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	return chat.Deps{LLM: client, Templates: tpl, Encoder: enc, Bank: bank}, llm
}

func promptOf(t *testing.T, llm *chattest.Server, stage string) string {
	t.Helper()
	for _, c := range llm.Calls() {
		if c.Stage == stage {
			var b strings.Builder
			for _, m := range c.Messages {
				b.WriteString(m.Content + "\n")
			}
			return b.String()
		}
	}
	t.Fatalf("no %s call among %v", stage, llm.Stages())
	return ""
}

func TestMSDPSelectsByOverlapAndSimilarity(t *testing.T) {
	enc := chat.HashEncoder{Dim: 4096}
	bank := selectionBank(t, enc)
	deps, llm := newBankDeps(t, func(stage string, _ []chat.Message) string {
		if stage == chat.StageMSDPKnow {
			return "Football is a family of team sports.\n( next ) more =>"
		}
		return "I love football, it is such a team sport!"
	}, bank, enc)
	p, err := chat.NewMSDP(deps, chat.MSDPOptions{KnowledgeExamples: 2, ResponseExamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "do you like football games"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Response != "I love football, it is such a team sport!" {
		t.Errorf("response %q", resp.Response)
	}
	var sel struct {
		Topic             string
		KnowledgeExamples []chat.Scored `json:"knowledge_examples"`
		ResponseExamples  []chat.Scored `json:"response_examples"`
		OverlapQualifying int           `json:"overlap_qualifying"`
	}
	if err := json.Unmarshal(resp.Turn.Stages[0].Output, &sel); err != nil {
		t.Fatal(err)
	}
	ids := func(s []chat.Scored) []string {
		var out []string
		for _, x := range s {
			out = append(out, x.ID)
		}
		return out
	}
	// Knowledge examples: the most similar to "football games | do you like football games".
	if got := ids(sel.KnowledgeExamples); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("knowledge examples %v, want [A B]", got)
	}
	// Response examples: drawn at random among those whose overlap ratio is in [0.6, 0.9] (B,
	// D, E; A copies its knowledge, C ignores it), whatever the dialogue.
	got := ids(sel.ResponseExamples)
	if len(got) != 2 || !slices.ContainsFunc(got, func(id string) bool { return id == "B" || id == "D" || id == "E" }) ||
		slices.Contains(got, "A") || slices.Contains(got, "C") || got[0] == got[1] {
		t.Errorf("response examples %v, want 2 of B, D, E", got)
	}
	// The topic comes from the dialogue, not from the nearest bank example.
	if sel.Topic != "football games" || sel.OverlapQualifying != 3 {
		t.Errorf("topic %q, qualifying %d", sel.Topic, sel.OverlapQualifying)
	}

	know := promptOf(t, llm, chat.StageMSDPKnow)
	if !strings.Contains(know, "( do you like football games ) Football => Football is a team sport played with a ball") ||
		!strings.HasSuffix(strings.TrimSpace(know), "( do you like football games ) football games =>") {
		t.Errorf("knowledge prompt:\n%s", know)
	}
	rp := promptOf(t, llm, chat.StageMSDPResp)
	for _, id := range got {
		if !strings.Contains(rp, "System replies: "+byID(bank, id).Response) {
			t.Errorf("response prompt lacks example %s:\n%s", id, rp)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(rp), "football games User: do you like football games We know that: Football is a family of team sports. System replies:") {
		t.Errorf("response prompt does not end with the paper's format 3 line:\n%s", rp)
	}
	for _, not := range []string{"not really, I prefer", "Football is a team sport played with a ball System"} {
		if strings.Contains(rp, not) {
			t.Errorf("response prompt has a filtered example %q", not)
		}
	}

	// A second turn keeps the same response examples and shows the system's previous turn.
	resp2, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: resp.ConversationID, Message: "what about cooking"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sel2 struct {
		ResponseExamples []chat.Scored `json:"response_examples"`
	}
	if err := json.Unmarshal(resp2.Turn.Stages[0].Output, &sel2); err != nil || !slices.Equal(ids(sel2.ResponseExamples), got) {
		t.Errorf("response examples changed with the dialogue: %v then %v", got, ids(sel2.ResponseExamples))
	}
	calls := llm.Calls()
	last := calls[len(calls)-1]
	if !strings.Contains(chattest.LastUser(last.Messages), "System: I love football, it is such a team sport! User: what about cooking We know that:") {
		t.Errorf("second response prompt lacks the previous system turn:\n%s", chattest.LastUser(last.Messages))
	}
}

func byID(b *chat.Bank, id string) chat.Example {
	for _, e := range b.Examples {
		if e.ID == id {
			return e
		}
	}
	return chat.Example{}
}

func TestSICLApproaches(t *testing.T) {
	enc := chat.HashEncoder{Dim: 4096}
	bank := selectionBank(t, enc)
	tests := []struct {
		approach string
		fixed    int
		want     []string // example responses expected in the prompt, by example id
	}{
		{chat.SICLNone, 0, nil},
		{chat.SICLFixed, 3, []string{"D"}},
		{chat.SICLTop1, 0, []string{"A"}},
		{chat.SICLTop3, 0, []string{"A", "B", "C"}},
	}
	byID := map[string]chat.Example{}
	for _, e := range bank.Examples {
		byID[e.ID] = e
	}
	for _, tt := range tests {
		t.Run(tt.approach, func(t *testing.T) {
			deps, llm := newBankDeps(t, func(string, []chat.Message) string { return "Bot: Sure, I watch every weekend." }, bank, enc)
			p, err := chat.NewSICL(deps, chat.SICLOptions{Approach: tt.approach, FixedExample: tt.fixed})
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
			resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "do you like football games"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Response != "Sure, I watch every weekend." {
				t.Errorf("response %q", resp.Response)
			}
			prompt := promptOf(t, llm, chat.StageSICL)
			command := map[int]string{0: "Complete the following conversation by giving an appropriate answer by the bot.",
				1: "Find the appropriate answer by the bot from sample 1 to complete the conversation 1.",
				3: "Find the appropriate answer by the bot from sample 1, sample 2 and sample 3 to complete the conversation 1."}[len(tt.want)]
			if !strings.HasPrefix(prompt, command) {
				t.Errorf("prompt does not start with the paper's command %q:\n%s", command, prompt)
			}
			if got := strings.Count(prompt, "Sample "); got != len(tt.want) {
				t.Errorf("%d samples in prompt, want %d:\n%s", got, len(tt.want), prompt)
			}
			last := -1
			for _, id := range tt.want {
				i := strings.Index(prompt, "Bot: "+byID[id].Response)
				if i < 0 || i < last {
					t.Errorf("sample %s missing or out of order in:\n%s", id, prompt)
				}
				last = i
			}
		})
	}
	// Approach 1: semantic search alone answers with the most similar sample's response, A's,
	// and calls no LLM.
	p, err := chat.NewSICL(chat.Deps{Encoder: enc, Bank: bank}, chat.SICLOptions{Approach: chat.SICLSearch})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "do you like football games"}, nil)
	if err != nil || resp.Response != byID["A"].Response {
		t.Errorf("search approach: %q, %v; want %q", resp.Response, err, byID["A"].Response)
	}
	if resp.Turn.Usage.Calls != 0 {
		t.Errorf("search approach made %d LLM calls", resp.Turn.Usage.Calls)
	}
	if _, err := chat.NewSICL(chat.Deps{LLM: chattest.NoLLM{}, Templates: &chat.Templates{}, Bank: bank}, chat.SICLOptions{Approach: chat.SICLFixed, FixedExample: 99}); err == nil {
		t.Error("fixed example out of range accepted")
	}
}

// The final stage of sicl streams from the LLM: each sentence goes out once it is complete,
// while the LLM is still writing, and the pieces concatenate to the response, with the speaker
// label the model added removed.
func TestSICLStreamsTheReply(t *testing.T) {
	enc := chat.HashEncoder{Dim: 4096}
	const out = "Bot: Sure, I watch every weekend with friends. It is the best part of my week! Do you play?"
	deps, llm := newBankDeps(t, func(string, []chat.Message) string { return out }, selectionBank(t, enc), enc)
	p, _ := chat.NewSICL(deps, chat.SICLOptions{})
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
	var pieces []string
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "do you like football games"}, &chat.Stream{Token: func(s string) { pieces = append(pieces, s) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Sure, I watch every weekend with friends.", " It is the best part of my week!", " Do you play?"}
	if resp.Response != strings.Join(want, "") || !slices.Equal(pieces, want) {
		t.Errorf("response %q from pieces %q, want %q", resp.Response, pieces, want)
	}
	// In process, with the LLM's pieces counted: the first sentence went out before the LLM
	// had written the second.
	var sentAt []int
	deltas := 0
	st := &pieceStreamer{text: out, onPiece: func() { deltas++ }}
	deps.LLM = st
	p2, _ := chat.NewSICL(deps, chat.SICLOptions{})
	svc2, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p2}})
	if _, err := svc2.Turn(context.Background(), chat.TurnRequest{Message: "do you like football games"}, &chat.Stream{Token: func(string) { sentAt = append(sentAt, deltas) }}); err != nil {
		t.Fatal(err)
	}
	if second := strings.Index(out, "It is"); len(sentAt) != 3 || sentAt[0] > second/4+2 {
		t.Errorf("sentences went out after LLM pieces %v; the second sentence starts in piece %d", sentAt, second/4+1)
	}
	if calls := llm.Calls(); len(calls) != 1 || !calls[0].Stream {
		t.Errorf("the reply was not requested as a stream: %+v", calls)
	}
	if u := resp.Turn.Usage; u.Calls != 1 || u.CompletionTokens == 0 {
		t.Errorf("usage of the streamed call %+v", u)
	}
	// Without a token sink the same pipeline does not stream.
	if _, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "and basketball?"}, nil); err != nil {
		t.Fatal(err)
	}
	if calls := llm.Calls(); calls[1].Stream {
		t.Error("streamed without a token sink")
	}
}

func TestMSDPRetrievedKnowledge(t *testing.T) {
	enc := chat.HashEncoder{Dim: 4096}
	deps, llm := newBankDeps(t, func(string, []chat.Message) string { return "It was a huge Disney hit." }, selectionBank(t, enc), enc)
	deps.Retriever = chattest.NewRetriever(loadLeads(t))
	p, err := chat.NewMSDP(deps, chat.MSDPOptions{Knowledge: "retrieve"})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "have you seen the animated film Frozen by Walt Disney Animation Studios"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := llm.Stages(); !slices.Equal(got, []string{chat.StageMSDPResp}) {
		t.Errorf("LLM stages %v, want only the response (knowledge is retrieved)", got)
	}
	if rp := promptOf(t, llm, chat.StageMSDPResp); !strings.Contains(rp, "Frozen (2013 film) User: have you seen") ||
		!strings.Contains(rp, "We know that: <<<UNTRUSTED passage\nFrozen is a 2013 American animated musical fantasy film") {
		t.Errorf("response prompt lacks the retrieved lead:\n%s", rp)
	}
	if len(resp.Turn.Passages) != 1 || resp.Turn.Passages[0].ID != "Frozen (2013 film)#0" {
		t.Errorf("passages %+v", resp.Turn.Passages)
	}
}

// pieceStreamer is an in-process streaming LLM that writes text four bytes at a time,
// calling onPiece before each piece.
type pieceStreamer struct {
	text    string
	onPiece func()
}

func (p *pieceStreamer) Complete(ctx context.Context, req chat.CompletionRequest) (chat.Completion, error) {
	return p.Stream(ctx, req, func(string) {})
}

func (p *pieceStreamer) Stream(_ context.Context, _ chat.CompletionRequest, onDelta func(string)) (chat.Completion, error) {
	for i := 0; i < len(p.text); i += 4 {
		p.onPiece()
		onDelta(p.text[i:min(i+4, len(p.text))])
	}
	return chat.Completion{Text: p.text, FinishReason: "stop", Usage: chat.Usage{Calls: 1}}, nil
}
