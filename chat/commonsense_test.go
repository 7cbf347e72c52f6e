package chat_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

func TestIsPassive(t *testing.T) {
	for msg, want := range map[string]bool{
		"yeah it was good":                  true,
		"ok":                                true,
		"haha nice.":                        true,
		"Who directed it?":                  false,
		"tell me more about the soundtrack": false,
		"I watched it with my kids last weekend and they sang along the whole time": false,
	} {
		if got := chat.IsPassive(msg); got != want {
			t.Errorf("IsPassive(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestCommonsenseQueryStage(t *testing.T) {
	base := wikiScript{generate: "It is a fun film.", claims: "None"}
	script := func(stage string, msgs []chat.Message) string {
		p := chattest.LastUser(msgs)
		switch stage {
		case chat.StageCSTopic:
			return "Topic: the 2013 Disney film Frozen"
		case chat.StageCSDirect:
			if !strings.Contains(p, "chatting about the 2013 Disney film Frozen") || !strings.Contains(p, `"yeah it was good"`) {
				return "Directive: (the narrative lacked the topic or the turn)"
			}
			return "Directive: Mention that Frozen was inspired by the Hans Christian Andersen fairy tale."
		case chat.StageCSQuery:
			if !strings.Contains(p, "Hans Christian Andersen") {
				return "Query: wrong"
			}
			return "Query: Frozen 2013 film inspired by Hans Christian Andersen Snow Queen\nTime: none"
		case chat.StageQuery:
			return "Search: yes\nQuery: Frozen film director\nTime: none"
		}
		return base.answer(stage, msgs)
	}
	llm := chattest.NewServer(script, 0)
	defer llm.Close()
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	tpl, _ := chat.LoadTemplates("")
	ret := chattest.NewRetriever(loadLeads(t))
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: ret}, chat.WikiChatOptions{QueryGen: "commonsense", Skip: []string{"refine"}})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "cs", Message: "yeah it was good"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wc.Name() != "commonsense" {
		t.Errorf("name %q", wc.Name())
	}
	stages := llm.Stages()
	for _, want := range []string{chat.StageCSTopic, chat.StageCSDirect, chat.StageCSQuery} {
		if !slices.Contains(stages, want) {
			t.Errorf("stage %s missing from %v", want, stages)
		}
	}
	if slices.Contains(stages, chat.StageQuery) {
		t.Errorf("passive turn used the plain query stage: %v", stages)
	}
	if q := ret.Queries(); len(q) != 1 || !strings.Contains(q[0].Text, "Snow Queen") {
		t.Errorf("retriever queries %+v", q)
	}
	if !strings.Contains(resp.Response, "Hans Christian Andersen") {
		t.Errorf("response %q does not use the retrieved lead", resp.Response)
	}
	conv, _, _ := svc.Conversation("cs")
	if conv.Topic != "the 2013 Disney film Frozen" {
		t.Errorf("topic %q not tracked", conv.Topic)
	}

	// An active turn keeps the topic tracker but plans with WikiChat's query prompt.
	if _, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "cs", Message: "Who directed it?"}, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(llm.Stages(), chat.StageQuery) {
		t.Error("active turn did not use the query stage")
	}
}
