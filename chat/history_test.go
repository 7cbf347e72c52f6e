package chat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// WikiChat's prompts show the paper's history windows: the last five turns to the query,
// generate and verify stages (appendix A), the last two to claims, draft and refine (the
// dlg[-2:] of Tables 20, 22 and 23); and the verifier is shown the reply the claims came from
// (Table 21).
func TestWikiChatHistoryWindows(t *testing.T) {
	llm := &promptLog{Completer: chattest.Completer{Script: citingScript(keepDraft)}}
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	wc, err := chat.NewWikiChat(chat.Deps{LLM: llm, Templates: tpl, Retriever: chattest.NewRetriever(citePassages)},
		chat.WikiChatOptions{PassagesPerQuery: 3})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	for i := 1; i <= 7; i++ {
		if _, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "h", Message: fmt.Sprintf("Tell me about Frozen, part %d.", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for stage, window := range map[string]int{chat.StageQuery: 5, chat.StageGenerate: 5, chat.StageVerify: 5,
		chat.StageClaims: 2, chat.StageDraft: 2, chat.StageRefine: 2} {
		ps := llm.stage(stage)
		if len(ps) == 0 {
			t.Errorf("no %s prompt", stage)
			continue
		}
		p := ps[len(ps)-1] // the seventh turn's
		var shown []int
		for i := 1; i <= 7; i++ {
			if strings.Contains(p, fmt.Sprintf("part %d.", i)) {
				shown = append(shown, i)
			}
		}
		if len(shown) != window+1 || shown[0] != 7-window {
			t.Errorf("%s shows turns %v, want the last %d and the current one", stage, shown, window)
		}
	}
	ps := llm.stage(chat.StageVerify)
	if !strings.Contains(ps[len(ps)-1], "Bot reply: Frozen was directed by Chris Buck and Jennifer Lee.") {
		t.Errorf("the verifier is not shown the reply:\n%s", ps[len(ps)-1])
	}
}
