package chat_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

func TestIsPassive(t *testing.T) {
	for msg, want := range map[string]bool{
		"yeah it was good": true,
		"ok":               true,
		"haha nice.":       true,
		// The paper's own passive turns (appendix, error analysis and examples).
		"Yes they do, Their music is the best, Their dance choreography are even better!":                                                              true,
		"I didn't know they originated in Persia. I have always hated them so I didn't care where they were from.":                                     true,
		"Thanks, I'll be sure to check them out, I love going to live music shows, not just metal.":                                                    true,
		"Yes i have actually been on that newsletter for years, they also have an amazing app that shows you what is around and how hard the hike is.": true,
		"That is fantastic. I have played my whole life. My dream is to one day compete in Wimbledon":                                                  true,
		"I like listening to NF because I like rap, and I appreciate the vulnerability in the lyrics":                                                  true,
		"I watched it with my kids last weekend and they sang along the whole time":                                                                    true,
		// Information or opinion requests.
		"Who directed it?":                  false,
		"tell me more about the soundtrack": false,
		"how long have you played":          false,
		"I wonder who wrote that song":      false,
		"do you think they will win":        false,
		"can you recommend a good trail":    false,
		"":                                  false,
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

// recorder is a Completer that keeps every request.
type recorder struct {
	chattest.Completer
	mu   sync.Mutex
	reqs []chat.CompletionRequest
}

func (r *recorder) Complete(ctx context.Context, req chat.CompletionRequest) (chat.Completion, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Completer.Complete(ctx, req)
}

// The directive and query stages sample as the paper does (top-p 0.9, temperature 0.7, queries
// of at most 40 tokens) and see the dialogue; other stages keep the client's greedy default.
func TestCommonsenseStageOptionsAndContext(t *testing.T) {
	rec := &recorder{Completer: chattest.Completer{Script: func(stage string, msgs []chat.Message) string {
		switch stage {
		case chat.StageCSTopic:
			return "Topic: the band Seventeen"
		case chat.StageCSDirect:
			return "Directive: Ask about their most popular social media promotions."
		case chat.StageCSQuery:
			return "Query: Seventeen band social media promotions\nTime: none"
		case chat.StageGenerate:
			return "They are great."
		case chat.StageClaims:
			return "None"
		}
		return "None"
	}}}
	tpl, _ := chat.LoadTemplates("")
	wc, err := chat.NewWikiChat(chat.Deps{LLM: rec, Templates: tpl, Retriever: chattest.NewRetriever(loadLeads(t))},
		chat.WikiChatOptions{QueryGen: "commonsense", Skip: []string{"refine"}})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	msg := "Yes they do, Their music is the best, Their dance choreography are even better!"
	if _, err := svc.Turn(context.Background(), chat.TurnRequest{Message: msg}, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rec.reqs {
		stage := chattest.StageOf(r.Messages)
		seen[stage] = true
		switch stage {
		case chat.StageCSDirect, chat.StageCSQuery:
			if r.Temperature == nil || *r.Temperature != 0.7 || r.TopP == nil || *r.TopP != 0.9 {
				t.Errorf("%s: temperature %v top-p %v, want 0.7 and 0.9", stage, r.Temperature, r.TopP)
			}
			if want := map[string]int{chat.StageCSQuery: 40}[stage]; r.MaxTokens != want {
				t.Errorf("%s: max tokens %d, want %d", stage, r.MaxTokens, want)
			}
			if !strings.Contains(chattest.LastUser(r.Messages), "User: "+msg) {
				t.Errorf("%s does not see the dialogue:\n%s", stage, chattest.LastUser(r.Messages))
			}
		default:
			if r.Temperature != nil || r.TopP != nil || r.MaxTokens != 0 {
				t.Errorf("%s: sampling options %v %v %d, want the client's", stage, r.Temperature, r.TopP, r.MaxTokens)
			}
		}
	}
	if !seen[chat.StageCSDirect] || !seen[chat.StageCSQuery] {
		t.Errorf("the paper's passive turn did not take the commonsense path: %v", seen)
	}
}

// Skipped outputs of the topic, directive and query stages are trace notes, and the turn goes on.
func TestCommonsenseTraceNotes(t *testing.T) {
	llm := chattest.Completer{Script: func(stage string, msgs []chat.Message) string {
		switch stage {
		case chat.StageCSTopic:
			return "Topic: the band Seventeen"
		case chat.StageCSDirect, chat.StageCSQuery:
			return "\n\n" // unusable
		case chat.StageGenerate:
			return "They are great."
		}
		return "None"
	}}
	tpl, _ := chat.LoadTemplates("")
	wc, _ := chat.NewWikiChat(chat.Deps{LLM: llm, Templates: tpl, Retriever: chattest.NewRetriever(loadLeads(t))},
		chat.WikiChatOptions{QueryGen: "commonsense", Skip: []string{"refine"}})
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Their dance choreography is even better!"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{chat.StageCSDirect, chat.StageCSQuery} {
		if s := findStage(t, resp.Turn.Stages, st); len(s.Errors) == 0 {
			t.Errorf("stage %s skipped an unusable output without a note", st)
		}
	}
}
