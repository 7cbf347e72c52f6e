package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// An empty or truncated last stage of mpc, msdp or sicl is a noted fallback, not a failed turn;
// a skipped knowledge or summarizer output is noted in the trace too.
func TestFinalStageUnusableIsNotAFailedTurn(t *testing.T) {
	bad := map[string]string{"empty": "  \n ", "only a label": "Bot:", "cut at limit": chattest.CutAtLimit + "I really like foot"}
	for kind, out := range bad {
		for _, pipe := range []string{"mpc", "msdp", "sicl"} {
			t.Run(pipe+"/"+kind, func(t *testing.T) {
				final := map[string]string{"mpc": chat.StageMPCRespond, "msdp": chat.StageMSDPResp, "sicl": chat.StageSICL}[pipe]
				script := func(stage string, msgs []chat.Message) string {
					switch stage {
					case final:
						return out
					case chat.StageMPCSummary, chat.StageMSDPKnow:
						return "" // skipped, and must be noted
					case chat.StageMPCClarify, chat.StageMPCMemory:
						return mpcScript(stage, msgs)
					}
					return "unexpected " + stage
				}
				enc := chat.HashEncoder{Dim: 256}
				deps, _ := newBankDeps(t, script, selectionBank(t, enc), enc)
				var p chat.Pipeline
				var err error
				switch pipe {
				case "mpc":
					p, err = chat.NewMPC(deps, chat.MPCOptions{SummaryEvery: 1})
				case "msdp":
					p, err = chat.NewMSDP(deps, chat.MSDPOptions{KnowledgeExamples: 2, ResponseExamples: 2})
				case "sicl":
					p, err = chat.NewSICL(deps, chat.SICLOptions{Approach: chat.SICLTop3})
				}
				if err != nil {
					t.Fatal(err)
				}
				svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{p}})
				resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "do you like football games"}, nil)
				if err != nil {
					t.Fatalf("the turn failed: %v", err)
				}
				if resp.Response != chat.DefaultNoReply || strings.Contains(resp.Response, "foot") {
					t.Errorf("response %q, want the fallback", resp.Response)
				}
				if st := findStage(t, resp.Turn.Stages, final); len(st.Errors) == 0 {
					t.Errorf("no trace note on %s", final)
				}
				noted := map[string]string{"mpc": chat.StageMPCSummary, "msdp": chat.StageMSDPKnow}[pipe]
				if noted != "" {
					if st := findStage(t, resp.Turn.Stages, noted); len(st.Errors) == 0 {
						t.Errorf("no trace note on %s", noted)
					}
				}
			})
		}
	}
}
