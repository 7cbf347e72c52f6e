package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// A reply cut at the token limit is its whole sentences, streamed or not: the commonsense
// response, which the paper caps at 100 tokens, and WikiChat's draft alike, never "I'm not
// sure" over the facts it did finish.
func TestCutReplyKeepsWholeSentences(t *testing.T) {
	const whole = "Frozen was directed by Chris Buck and Jennifer Lee [1]. It was produced by Walt Disney Animation Studios [1]."
	cut := chattest.CutAtLimit + whole + " It won two Academy Awards for Best Anim"
	script := func(stage string, msgs []chat.Message) string {
		switch stage {
		case chat.StageCSTopic:
			return "Topic: the 2013 Disney film Frozen"
		case chat.StageDraft, chat.StageCSResponse:
			return cut
		}
		return citingScript(keepDraft)(stage, msgs)
	}
	for _, stream := range []bool{false, true} {
		for _, queryGen := range []string{"commonsense", "wikichat"} {
			opts := chat.WikiChatOptions{QueryGen: queryGen, PassagesPerQuery: 3, Skip: []string{chat.StageRefine}}
			svc, _ := citeService(t, script, opts)
			var sink *chat.Stream
			var streamed strings.Builder
			if stream {
				sink = &chat.Stream{Token: func(s string) { streamed.WriteString(s) }}
			}
			resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, sink)
			if err != nil {
				t.Fatal(err)
			}
			got := resp.Response
			if !strings.Contains(got, "Chris Buck") || !strings.Contains(got, "Walt Disney Animation Studios") || strings.Contains(got, "Anim ") || strings.HasSuffix(got, "Anim") {
				t.Errorf("%s, stream %v: reply %q, want the two whole sentences only", queryGen, stream, got)
			}
			if stream && streamed.String() != got {
				t.Errorf("%s, streamed %q, reply %q", queryGen, streamed.String(), got)
			}
		}
	}
}
