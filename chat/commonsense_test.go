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

// passiveTurns are the paper's passive user turns (appendix A.3 and Table 3: the turns whose
// next bot reply the paper's queries were generated for), the user turns of its example
// dialogues that request nothing, and statements that carry a request's words in passing.
var passiveTurns = []string{
	// The paper's passive turns.
	"Yes they do, Their music is the best, Their dance choreography are even better!",
	"I didn't know they originated in Persia. I have always hated them so I didn't care where they were from.",
	"Thanks, I'll be sure to check them out, I love going to live music shows, not just metal.",
	"Yes i have actually been on that newsletter for years, they also have an amazing app that shows you what is around and how hard the hike is.",
	"That is fantastic. I have played my whole life. My dream is to one day compete in Wimbledon",
	"I like listening to NF because I like rap, and I appreciate the vulnerability in the lyrics",
	// Earlier user turns of the paper's dialogues that request nothing.
	"Yeah they have quite a few albums I think.",
	"We have been especially with all the current issues, being outside is the only way to stay sane.",
	// Statements with a request's words in passing.
	"yeah it was good", "ok", "haha nice.", "I watched it with my kids last weekend and they sang along the whole time",
	"I'm looking forward to their next tour", "Had a great time at the show last night",
	"Was a blast, honestly", "Any time I hear them I start dancing", "Ever since I was a kid I loved tennis",
	"That would explain why I love them so much", "I was shocked to find out they split up",
	"I look up to Federer more than anyone", "I had no idea what to expect from the film",
	"I recommend their first album to everyone", "Their music is the best, we are there every summer",
	"Anyway, I think their choreography is better",
}

// requestTurns are information requests (the first block) and opinion requests, with and
// without a question mark: the turns the paper's intent detector removed.
var requestTurns = []string{
	"Who directed it?", "tell me more about the soundtrack", "how long have you played",
	"I wonder who wrote that song", "I was wondering when they formed", "I'd love to know more about their history",
	"I'm curious what their best album is", "Let me know when the new album comes out", "I need some information on Wimbledon",
	"I'm looking for a good book on tennis", "Please find me reviews of The Conjuring", "Search the latest news on Seventeen",
	"Any good hiking trails near Miami", "Is Frozen a Disney film", "whats the best song by NF", "where's the Louvre",
	"Look up the AllTrailsPro app", "Have they released anything new", "Give me some facts about Persia",
	"Is there any way to see them live",
	"do you think they will win", "can you recommend a good trail", "What do you think of their new album",
	"Thoughts on the new Frozen movie", "I'd like your thoughts on Federer versus Nadal", "Which do you prefer, Federer or Nadal",
	"Have you seen Frozen", "Ever been to Wimbledon", "What's your favourite band", "Tell me your opinion of NF",
	"Any recommendations for metal bands like In Flames", "Do you like rap",
}

func TestIsPassive(t *testing.T) {
	for _, msg := range passiveTurns {
		if !chat.IsPassive(msg) {
			t.Errorf("IsPassive(%q) = false: a passive turn called a request", msg)
		}
	}
	for _, msg := range append(requestTurns, "") {
		if chat.IsPassive(msg) {
			t.Errorf("IsPassive(%q) = true: a request called passive", msg)
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
		case chat.StageCSResponse:
			// A response written from the search result: its first sentence, and a question.
			blocks := untrustedBlocks(p)
			if len(blocks) != 1 {
				return "Who knows?"
			}
			_, body, _ := strings.Cut(blocks[0], " | ")
			first, _, _ := strings.Cut(body, ". ")
			return "Fun fact: " + first + ". Did you know that?"
		}
		return base.answer(stage, msgs)
	}
	llm := chattest.NewServer(script, 0)
	defer llm.Close()
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	tpl, _ := chat.LoadTemplates("")
	ret := chattest.NewRetriever(loadLeads(t))
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: ret}, chat.WikiChatOptions{QueryGen: "commonsense"})
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
	// Section 3.1: the response is one call on the top search result.
	if q := ret.Queries(); len(q) != 1 || !strings.Contains(q[0].Text, "Snow Queen") || q[0].K != 1 {
		t.Errorf("retriever queries %+v", q)
	}
	for _, s := range []string{chat.StageGenerate, chat.StageSummarize, chat.StageDraft, chat.StageRefine} {
		if slices.Contains(stages, s) {
			t.Errorf("the paper's response ran WikiChat's stage %s: %v", s, stages)
		}
	}
	if !strings.Contains(resp.Response, "2013 American animated musical fantasy film") || len(resp.Turn.Citations) != 1 ||
		resp.Turn.Citations[0].Title != "Frozen (2013 film)" {
		t.Errorf("response %q does not use the retrieved lead (dropped: %+v)", resp.Response, resp.Turn.Dropped)
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
		case chat.StageCSResponse:
			return "They are great."
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
		case chat.StageCSDirect, chat.StageCSQuery, chat.StageCSResponse:
			if r.Temperature == nil || *r.Temperature != 0.7 || r.TopP == nil || *r.TopP != 0.9 {
				t.Errorf("%s: temperature %v top-p %v, want 0.7 and 0.9", stage, r.Temperature, r.TopP)
			}
			if want := map[string]int{chat.StageCSQuery: 40, chat.StageCSResponse: 100}[stage]; r.MaxTokens != want {
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
	if !seen[chat.StageCSDirect] || !seen[chat.StageCSQuery] || !seen[chat.StageCSResponse] {
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

// The commonsense pipeline writes its final response as the paper does (section 3.1: nucleus
// sampling, top-p 0.9, temperature 0.7, at most 100 tokens): in its response stage by default,
// in the draft when it answers WikiChat's way; WikiChat's own draft, and the refinement, stay
// greedy.
func TestCommonsenseFinalResponseSampling(t *testing.T) {
	for _, tt := range []struct {
		queryGen, response string
		sampled            string   // the stage sampled as the paper's response
		greedy             []string // the reply stages left greedy
	}{
		{"commonsense", chat.CommonsensePaper, chat.StageCSResponse, nil},
		{"commonsense", chat.CommonsenseWikiChat, chat.StageDraft, []string{chat.StageRefine}},
		{"wikichat", "", "", []string{chat.StageDraft, chat.StageRefine}},
	} {
		t.Run(tt.queryGen+"/"+tt.response, func(t *testing.T) {
			script := citingScript(keepDraft)
			rec := &recorder{Completer: chattest.Completer{Script: func(stage string, msgs []chat.Message) string {
				switch stage {
				case chat.StageCSTopic:
					return "Topic: the 2013 Disney film Frozen"
				case chat.StageCSResponse:
					return "Frozen was directed by Chris Buck and Jennifer Lee."
				}
				return script(stage, msgs)
			}}}
			tpl, _ := chat.LoadTemplates("")
			wc, err := chat.NewWikiChat(chat.Deps{LLM: rec, Templates: tpl, Retriever: chattest.NewRetriever(citePassages)},
				chat.WikiChatOptions{QueryGen: tt.queryGen, CommonsenseResponse: tt.response, PassagesPerQuery: 3})
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
			resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Response == chat.DefaultNotSure || !strings.Contains(resp.Response, "[1]") {
				t.Errorf("reply %q", resp.Response)
			}
			seen := map[string]bool{}
			for _, r := range rec.reqs {
				stage := chattest.StageOf(r.Messages)
				seen[stage] = true
				sampled := r.Temperature != nil && *r.Temperature == 0.7 && r.TopP != nil && *r.TopP == 0.9 && r.MaxTokens == 100
				greedy := r.Temperature == nil && r.TopP == nil && r.MaxTokens == 0
				switch {
				case stage == tt.sampled && !sampled:
					t.Errorf("%s: temperature %v top-p %v max tokens %d, want 0.7, 0.9, 100", stage, r.Temperature, r.TopP, r.MaxTokens)
				case slices.Contains(tt.greedy, stage) && !greedy:
					t.Errorf("%s: sampling options %v %v %d, want the client's", stage, r.Temperature, r.TopP, r.MaxTokens)
				}
			}
			for _, s := range append(tt.greedy, tt.sampled) {
				if s != "" && !seen[s] {
					t.Errorf("stage %s not called: %v", s, seen)
				}
			}
		})
	}
}

// A topic tracker that answers "none" or refuses ("I can't determine the topic", "Sorry, ...")
// names no topic: the conversation keeps the one it had. A real title that opens like a
// refusal is a topic.
func TestCommonsenseTopicRefusalIsNoTopic(t *testing.T) {
	const first = "the 2013 Disney film Frozen"
	tests := []struct {
		out, want string
	}{
		{"Topic: none", first},
		{"Topic: None.", first},
		{"Topic: N/A", first},
		{"Topic: I can't determine the topic from this conversation.", first},
		{"I cannot tell what the topic is.", first},
		{"Topic: Sorry, the conversation has no clear topic.", first},
		{"Topic: unclear", first},
		{"Topic: no specific topic", first},
		{"Topic: The topic is unclear.", first},
		{"Topic: As an AI, I cannot infer topics.", first},
		{"Topic: I Will Always Love You", "I Will Always Love You"},
		{"Topic: I Can't Get No Satisfaction", "I Can't Get No Satisfaction"},
		{"Topic: Sorry", "Sorry"},
		{"Topic: Nobody's Fool (2018 film)", "Nobody's Fool (2018 film)"},
		{"Topic: Unknown Pleasures", "Unknown Pleasures"},
		{"Topic: I Can't Tell You Why", "I Can't Tell You Why"},
		{"Topic: I Don't Know How to Love Him", "I Don't Know How to Love Him"},
		{"Topic: I Can't Help Myself", "I Can't Help Myself"},
		{"Topic: There's No Business Like Show Business", "There's No Business Like Show Business"},
		{"Topic: Sorry, Wrong Number", "Sorry, Wrong Number"},
		{"Topic: It's Impossible", "It's Impossible"},
		{"Topic: Sorry, I can't help with that.", first},
		{"Topic: I don't know.", first},
		{"Topic: There is no clear topic here.", first},
		{"Topic: Unknown.", first},
		{"Topic: It's impossible to say from this.", first},
	}
	for _, tt := range tests {
		t.Run(tt.out, func(t *testing.T) {
			turn := 0
			script := func(stage string, msgs []chat.Message) string {
				switch stage {
				case chat.StageCSTopic:
					turn++
					if turn == 1 {
						return "Topic: " + first
					}
					return tt.out
				case chat.StageCSDirect:
					return "Directive: Say something about the topic."
				case chat.StageCSQuery:
					return "Query: vitamin D\nTime: none"
				}
				return hallucinator(nil)(stage, msgs)
			}
			tpl, _ := chat.LoadTemplates("")
			wc, err := chat.NewWikiChat(chat.Deps{LLM: chattest.Completer{Script: script}, Templates: tpl, Retriever: chattest.NewRetriever(roadPassages)},
				chat.WikiChatOptions{QueryGen: "commonsense", Skip: []string{"refine"}})
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
			for _, msg := range []string{"yeah it was good", "haha nice."} {
				if _, err := svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "cs", Message: msg}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if conv, _, _ := svc.Conversation("cs"); conv.Topic != tt.want {
				t.Errorf("topic %q, want %q", conv.Topic, tt.want)
			}
		})
	}
}
