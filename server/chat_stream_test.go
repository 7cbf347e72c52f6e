package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
)

// A streamed turn whose final checks refuse what streamed (here: a refinement with two
// revisions) sends token events, then one replace event with the reply, then done with the
// same reply; the refused second revision is never streamed (the trace of the done event
// records it as the refine stage's unusable output).
func TestChatStreamReplaceEvent(t *testing.T) {
	script := func(stage string, msgs []chat.Message) string {
		if stage == chat.StageRefine {
			return "Relevance: ok 90/100\nRevised response: Sorry, I have no idea at all.\nRevised response: Napoleon did it."
		}
		return echoScript(stage, msgs)
	}
	e := newScriptedChatEnv(t, script, chat.StoreOptions{}, "")
	w := do(e.srv, "POST", "/v1/chat", `{"message":"who discovered vitamin D?","stream":true}`)
	var kinds []string
	var tokens strings.Builder
	var replaced map[string]string
	var done ChatResponse
	for _, ev := range sseEvents(t, w.Body.String()) {
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev[0] {
			kinds = append(kinds, ev[0])
		}
		switch ev[0] {
		case "token":
			var tok map[string]string
			mustJSON(t, []byte(ev[1]), &tok)
			tokens.WriteString(tok["token"])
		case "replace":
			mustJSON(t, []byte(ev[1]), &replaced)
		case "done":
			mustJSON(t, []byte(ev[1]), &done)
		}
	}
	if strings.Join(kinds, ",") != "token,replace,done" {
		t.Fatalf("events %v, want token, replace, done", kinds)
	}
	if tokens.String() != "Sorry, I have no idea at all." {
		t.Errorf("streamed %q", tokens.String())
	}
	if replaced["reply"] != chat.DefaultNotSure || done.Reply != replaced["reply"] {
		t.Errorf("replace %q, done %q", replaced, done.Reply)
	}
	conv, err := e.store.Get("session:"+w.Header().Get(SessionHeader), done.Conversation)
	if err != nil || conv.Turns[0].Bot != chat.DefaultNotSure {
		b, _ := json.Marshal(conv)
		t.Errorf("stored %s %v", b, err)
	}
}
