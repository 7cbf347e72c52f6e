package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// The commonsense pipeline's response is capped at 100 tokens, as the paper's is: a draft cut
// at the cap is its complete sentences, streamed or not, not "I'm not sure" over verified facts.
// WikiChat's own draft has no such cap, and one cut off stays unusable.
func TestCappedDraftKeepsWholeSentences(t *testing.T) {
	const whole = "Frozen was directed by Chris Buck and Jennifer Lee [1]. It was released in 2013 [1]."
	script := func(stage string, msgs []chat.Message) string {
		switch stage {
		case chat.StageCSTopic:
			return "Topic: the 2013 Disney film Frozen"
		case chat.StageDraft:
			return chattest.CutAtLimit + whole + " It won two Academy Awards for Best Anim"
		}
		return citingScript(keepDraft)(stage, msgs)
	}
	for _, stream := range []bool{false, true} {
		for _, queryGen := range []string{"commonsense", "wikichat"} {
			opts := chat.WikiChatOptions{QueryGen: queryGen, PassagesPerQuery: 3, Skip: []string{chat.StageRefine}}
			svc, _ := citeService(t, script, opts)
			var sink *chat.Stream
			replaced := ""
			if stream {
				sink = &chat.Stream{Token: func(string) {}, Replace: func(r string) { replaced = r }}
			}
			resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, sink)
			if err != nil {
				t.Fatal(err)
			}
			got := resp.Response
			if queryGen == "wikichat" {
				if got != chat.DefaultNotSure {
					t.Errorf("wikichat, stream %v: a draft cut off was used: %q", stream, got)
				}
				continue
			}
			if !strings.Contains(got, "Chris Buck") || !strings.Contains(got, "2013") || strings.Contains(got, "Anim") {
				t.Errorf("commonsense, stream %v: reply %q, want the two whole sentences only", stream, got)
			}
			if stream && replaced != got {
				t.Errorf("commonsense, streamed: replacement %q, reply %q", replaced, got)
			}
		}
	}
}
