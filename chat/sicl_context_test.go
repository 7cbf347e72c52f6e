package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// recordingEncoder remembers the texts it embeds.
type recordingEncoder struct {
	chat.Encoder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.Encoder.Encode(ctx, texts)
}

// S-ICL's inquiry is the whole dialogue, "the last utterance along with the previous
// utterances" (section 2.5), and the search embeds the concatenation of them all (sections 2.2
// and 2.4), each within a byte budget that keeps the prompt inside the paper's LLM window:
// past it the oldest utterances go, and the trace says how many. A sample shows its example's
// whole dialogue, within its own budget.
func TestSICLShowsTheWholeDialogueWithinItsBudget(t *testing.T) {
	short := func(i int) string { return fmt.Sprintf("turn %d: I like football team number %d", i, i) }
	long := func(i int) string {
		return fmt.Sprintf("turn %d: ", i) + strings.TrimSpace(strings.Repeat("football is lovely ", 60))
	}
	tests := []struct {
		name                 string
		turn                 func(int) string
		turns                int
		opts                 chat.SICLOptions
		wantFirst            int // the oldest earlier turn the prompt shows
		wantCut, wantSearchC int // oldest utterances cut from the prompt and from the search text
	}{
		{"a short dialogue, whole", short, 6, chat.SICLOptions{}, 0, 0, 0},
		// User utterances of 1,154 bytes, the bot's of 34: 8 KiB holds the message and the
		// newest 11 (the first user turn goes), the search's 1 KiB only the message, clipped.
		{"a long dialogue, newest first", long, 6, chat.SICLOptions{}, 1, 1, 12},
		// 3 KiB: the message, the bot's last two answers and the user turn between them.
		{"a smaller budget", long, 6, chat.SICLOptions{ContextBytes: 3 << 10, SearchBytes: 3 << 10}, 5, 9, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := &recordingEncoder{Encoder: chat.HashEncoder{Dim: 256}}
			bank := longSampleBank(t, enc)
			deps, llm := newBankDeps(t, func(string, []chat.Message) string { return "Sure, I watch every weekend." }, bank, enc)
			p, err := chat.NewSICL(deps, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
			var resp chat.TurnResponse
			for i := 0; i <= tt.turns; i++ {
				if resp, err = svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "c", Message: tt.turn(i)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			prompt := lastCall(llm, chat.StageSICL)
			for i := 0; i < tt.turns; i++ {
				if shown := strings.Contains(prompt, "User: "+tt.turn(i)+"\n"); shown != (i >= tt.wantFirst) {
					t.Errorf("turn %d shown: %v, want %v", i, shown, i >= tt.wantFirst)
				}
			}
			if !strings.HasSuffix(prompt, "User: "+tt.turn(tt.turns)+"\nBot:") {
				t.Errorf("the inquiry does not end with the message:\n%s", prompt[max(0, len(prompt)-300):])
			}
			var sel struct {
				Context, Search struct {
					Utterances, Bytes, Budget int
					Cut                       int `json:"cut_oldest"`
				}
				SampleCut []int `json:"sample_cut"`
			}
			if err := json.Unmarshal(resp.Turn.Stages[0].Output, &sel); err != nil {
				t.Fatal(err)
			}
			if sel.Context.Cut != tt.wantCut || sel.Search.Cut != tt.wantSearchC || sel.Context.Bytes > sel.Context.Budget || sel.Search.Bytes > sel.Search.Budget {
				t.Errorf("trace %+v, want %d and %d cut", sel, tt.wantCut, tt.wantSearchC)
			}
			// The search text: the newest utterances, the message last, within its budget.
			search := enc.texts[len(enc.texts)-1]
			if !strings.Contains(search, tt.turn(tt.turns)[:min(100, len(tt.turn(tt.turns)))]) || len(search) > sel.Search.Budget+16 ||
				tt.wantSearchC == 0 && !strings.Contains(search, tt.turn(0)) {
				t.Errorf("search text of %d bytes ends %q", len(search), search[max(0, len(search)-60):])
			}
			// The samples show their examples' whole dialogues: 8 utterances, where 4 were shown.
			for _, line := range []string{"Bot: sample turn 0\n", "User: sample turn 1\n", "User: sample turn 7\nBot: I watch every weekend"} {
				if !strings.Contains(prompt, line) {
					t.Errorf("a sample lacks %q:\n%s", line, prompt[:min(len(prompt), 1500)])
				}
			}
			if len(sel.SampleCut) != 3 || sel.SampleCut[0] != 0 {
				t.Errorf("sample cuts %v", sel.SampleCut)
			}
		})
	}
}

// longSampleBank has three examples of eight utterances each.
func longSampleBank(t *testing.T, enc chat.Encoder) *chat.Bank {
	t.Helper()
	var b strings.Builder
	for e := 0; e < 3; e++ {
		var hist []string
		for i := 0; i < 8; i++ {
			hist = append(hist, fmt.Sprintf("sample turn %d", i))
		}
		line, _ := json.Marshal(chat.Example{ID: fmt.Sprint("ex", e), Topic: "Football", History: hist, Response: fmt.Sprintf("I watch every weekend, example %d.", e)})
		b.Write(append(line, '\n'))
	}
	bank, _, err := chat.BuildBank(context.Background(), strings.NewReader(b.String()), "long.jsonl", enc, chat.BankBuildOptions{Encoder: "hash"})
	if err != nil {
		t.Fatal(err)
	}
	return bank
}

// lastCall is every message of the last call of a stage, one after another.
func lastCall(llm *chattest.Server, stage string) string {
	var b strings.Builder
	for _, c := range llm.Calls() {
		if c.Stage == stage {
			b.Reset()
			for _, m := range c.Messages {
				b.WriteString(m.Content + "\n")
			}
		}
	}
	return strings.TrimSpace(b.String())
}
