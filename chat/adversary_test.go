package chat_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

var (
	sciFactOnce sync.Once
	sciFactRet  *chattest.Retriever
)

// sciFactRetriever is the whole SciFact corpus behind chattest's retriever, which also gives
// its document frequencies (TermStats), as an index does.
func sciFactRetriever(t testing.TB) *chattest.Retriever {
	sciFactOnce.Do(func() { sciFactRet = chattest.NewRetriever(loadSciFact(t)) })
	return sciFactRet
}

// roadTurns runs a road's turns through pipeline (wikichat or commonsense), streamed or not,
// and returns the last turn's response and the pieces streamed in it.
func roadTurns(t *testing.T, script chattest.Script, pipeline string, turns []string, stream bool) (chat.TurnResponse, []string) {
	t.Helper()
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	ret := sciFactRetriever(t)
	opts := chat.WikiChatOptions{}
	if pipeline == "commonsense" {
		opts.QueryGen = "commonsense"
	}
	wc, err := chat.NewWikiChat(chat.Deps{LLM: chattest.Completer{Script: script}, Templates: tpl, Retriever: ret, Terms: ret}, opts)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}, MaxReplyTokens: 512})
	if err != nil {
		t.Fatal(err)
	}
	var resp chat.TurnResponse
	var pieces []string
	for i, msg := range turns {
		var sink *chat.Stream
		if stream && i == len(turns)-1 {
			sink = &chat.Stream{Token: func(s string) { pieces = append(pieces, s) }}
		}
		if resp, err = svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "road", Message: msg}, sink); err != nil {
			t.Fatal(err)
		}
	}
	return resp, pieces
}

// TestAdversaryRoads drives wikichat and commonsense with an LLM that lies in one stage at a
// time, by each road of issue 49, streamed and not: no lie reaches the reply or a stream event,
// what streamed is the reply, and every number a sentence states is in the passage it cites.
// The counts of sentences kept and dropped are logged per road.
func TestAdversaryRoads(t *testing.T) {
	for _, road := range chattest.Roads() {
		for _, pipeline := range []string{"wikichat", "commonsense"} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", road.Name, pipeline, stream), func(t *testing.T) {
					resp, pieces := roadTurns(t, road.Script, pipeline, road.Turns, stream)
					if leaks := chattest.Leaks(resp.Response, road.Lies); len(leaks) > 0 {
						t.Errorf("the reply carries %q: %q", leaks, resp.Response)
					}
					for _, p := range pieces {
						if leaks := chattest.Leaks(p, road.Lies); len(leaks) > 0 {
							t.Errorf("a stream event carries %q: %q", leaks, p)
						}
					}
					if stream && strings.Join(pieces, "") != resp.Response {
						t.Errorf("streamed %q, reply %q", strings.Join(pieces, ""), resp.Response)
					}
					if road.MaxReplyBytes > 0 && len(resp.Response) > road.MaxReplyBytes {
						t.Errorf("reply of %d bytes, over %d", len(resp.Response), road.MaxReplyBytes)
					}
					checkCitedNumbers(t, resp)
					if resp.Response == chat.DefaultNotSure {
						t.Errorf("the road's honest part was lost too: %q (dropped %+v)", resp.Response, resp.Turn.Dropped)
					}
					t.Logf("%d sentences kept, %d dropped", len(sentencesOf(resp.Response)), len(resp.Turn.Dropped))
				})
			}
		}
	}
}

// TestHonestAndParaphrasingLLMsKeepTheirFacts: an LLM that states what the passages say, word for
// word or in its own words, keeps every fact it was given, in wikichat and commonsense, streamed
// or not.
func TestHonestAndParaphrasingLLMsKeepTheirFacts(t *testing.T) {
	for _, llm := range []struct {
		name   string
		script chattest.Script
		reword func(string) string
	}{
		{"honest", chattest.Honest(), func(s string) string { return s }},
		{"paraphrasing", chattest.Paraphraser(), chattest.Paraphrase},
		{"generic", chattest.Generic("all", chattest.Honest()), func(s string) string { return s }},
	} {
		for _, pipeline := range []string{"wikichat", "commonsense"} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", llm.name, pipeline, stream), func(t *testing.T) {
					resp, _ := roadTurns(t, llm.script, pipeline, []string{chattest.RoadQuestion}, stream)
					given := factsGiven(resp)
					if len(given) == 0 {
						t.Fatalf("no fact was given to the final stage: %+v", resp.Turn.Stages)
					}
					kept := 0
					for _, f := range given {
						if strings.Contains(markerFree(resp.Response), strings.TrimSuffix(llm.reword(f), ".")) {
							kept++
						} else {
							t.Errorf("fact %q is not in the reply %q (dropped %+v)", llm.reword(f), resp.Response, resp.Turn.Dropped)
						}
					}
					t.Logf("%d of %d facts kept, %d sentences dropped", kept, len(given), len(resp.Turn.Dropped))
				})
			}
		}
	}
}

// factsGiven are the facts the final stage was written from: the verified facts of wikichat's
// draft (its citations' facts), or the first sentence of commonsense's top passage.
func factsGiven(resp chat.TurnResponse) []string {
	var out []string
	for _, c := range resp.Turn.Citations {
		out = append(out, c.Facts...)
	}
	if resp.Turn.Pipeline == "commonsense" && len(resp.Turn.Citations) > 0 {
		text := resp.Turn.Citations[0].Text
		if _, body, ok := strings.Cut(text, " | "); ok {
			text = body
		}
		first, _, _ := strings.Cut(text, ". ")
		out = append(out, strings.TrimSpace(first)+".")
	}
	return out
}

var (
	digitsRe    = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)
	citedNumRe  = regexp.MustCompile(`\[(\d+)(?:, \d+)*\]`)
	sentenceCut = regexp.MustCompile(`[.!?]\s+`)
)

// checkCitedNumbers: every number of a cited sentence is in the passage it cites first.
func checkCitedNumbers(t *testing.T, resp chat.TurnResponse) {
	t.Helper()
	for _, s := range sentencesOf(resp.Response) {
		m := citedNumRe.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		var n int
		fmt.Sscan(m[1], &n)
		if n < 1 || n > len(resp.Turn.Citations) {
			t.Errorf("sentence %q cites [%d] of %d citations", s, n, len(resp.Turn.Citations))
			continue
		}
		passage := resp.Turn.Citations[n-1].Text
		for _, num := range digitsRe.FindAllString(citedNumRe.ReplaceAllString(s, ""), -1) {
			if !strings.Contains(passage, num) {
				t.Errorf("sentence %q states %s, which its passage %s does not", s, num, resp.Turn.Citations[n-1].ID)
			}
		}
	}
}

func sentencesOf(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range sentenceCut.Split(s, -1) {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}
