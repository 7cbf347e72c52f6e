package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// streamTurn runs one streamed turn and returns the response, the token pieces, the
// replacement announced ("" if none) and the stages the LLM was asked to stream.
func streamTurn(t *testing.T, script chattest.Script, opts chat.WikiChatOptions) (chat.TurnResponse, []string, string, []string) {
	t.Helper()
	svc, llm := citeService(t, script, opts)
	var pieces []string
	replaced, replacements := "", 0
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, &chat.Stream{
		Token: func(s string) {
			if replacements > 0 {
				t.Errorf("token %q after the replacement", s)
			}
			pieces = append(pieces, s)
		},
		Replace: func(r string) { replaced, replacements = r, replacements+1 },
	})
	if err != nil {
		t.Fatal(err)
	}
	if replacements > 1 {
		t.Errorf("%d replacements", replacements)
	}
	var streamedStages []string
	for _, c := range llm.Calls() {
		if c.Stream {
			streamedStages = append(streamedStages, c.Stage)
		}
	}
	return resp, pieces, replaced, streamedStages
}

const feedback = "Relevance: fine 90/100\nNaturalness: fine 90/100\nNon-repetition: fine 100/100\nTemporal correctness: fine 100/100\n"

// The last stage of wikichat and commonsense streams as the LLM writes it: the refinement's
// revised response (never its feedback), or the draft when refine is skipped. What streamed is
// the reply, and nothing replaces it.
func TestWikiChatStreamsTheFinalStage(t *testing.T) {
	withTopic := func(s chattest.Script) chattest.Script {
		return func(stage string, msgs []chat.Message) string {
			if stage == chat.StageCSTopic {
				return "Topic: the 2013 Disney film Frozen"
			}
			return s(stage, msgs)
		}
	}
	tests := []struct {
		name   string
		refine func(string) string
		opts   chat.WikiChatOptions
		stage  string
	}{
		{"refine", keepDraft, chat.WikiChatOptions{}, chat.StageRefine},
		{"refine with feedback after the revision", func(d string) string {
			return "Revised response after applying this feedback: " + d + "\n" + feedback
		}, chat.WikiChatOptions{}, chat.StageRefine},
		{"draft, refine skipped", keepDraft, chat.WikiChatOptions{Skip: []string{chat.StageRefine}}, chat.StageDraft},
		{"commonsense refine", keepDraft, chat.WikiChatOptions{QueryGen: "commonsense"}, chat.StageRefine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.PassagesPerQuery = 3
			resp, pieces, replaced, streamed := streamTurn(t, withTopic(citingScript(tt.refine)), tt.opts)
			got := strings.Join(pieces, "")
			if len(streamed) != 1 || streamed[0] != tt.stage {
				t.Errorf("stages streamed from the LLM: %v, want [%s]", streamed, tt.stage)
			}
			// The fake LLM sends four characters a chunk: far more pieces than words.
			if len(pieces) <= len(strings.Fields(resp.Response)) {
				t.Errorf("%d pieces for %d words: not streamed from the LLM", len(pieces), len(strings.Fields(resp.Response)))
			}
			if got != resp.Response || replaced != "" || !strings.Contains(got, "Kristen Bell") || !strings.Contains(got, "[1]") {
				t.Errorf("streamed %q, replaced by %q, reply %q", got, replaced, resp.Response)
			}
			if strings.Contains(got, "/100") || strings.Contains(got, "Revised") {
				t.Errorf("the refinement's format streamed: %q", got)
			}
		})
	}
}

// When the final checks refuse what streamed, the client is told, with the reply that replaces
// it; the stage's format lines never reach it.
func TestWikiChatStreamReplaced(t *testing.T) {
	tests := []struct {
		name    string
		refine  func(string) string
		opts    chat.WikiChatOptions
		want    string // the reply: the draft, or "I'm not sure"
		notSent string
	}{
		{"two revisions", func(d string) string {
			return feedback + "Revised response: They loved it.\nRevised response: It was fine."
		}, chat.WikiChatOptions{}, "draft", "It was fine"},
		{"revision cut at the token limit", func(d string) string {
			return chattest.CutAtLimit + feedback + "Revised response: Frozen is a 2013 film that"
		}, chat.WikiChatOptions{}, "draft", ""},
		{"draft with feedback lines", nil, chat.WikiChatOptions{Skip: []string{chat.StageRefine}}, chat.DefaultNotSure, "Relevance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := citingScript(tt.refine)
			if tt.refine == nil {
				script = func(stage string, msgs []chat.Message) string {
					if stage == chat.StageDraft {
						return "Frozen is a 2013 film [1].\n" + feedback
					}
					return citingScript(keepDraft)(stage, msgs)
				}
			}
			tt.opts.PassagesPerQuery = 3
			resp, pieces, replaced, _ := streamTurn(t, script, tt.opts)
			got := strings.Join(pieces, "")
			t.Logf("streamed %q, replaced by %q", got, replaced)
			if got == "" || replaced == "" || replaced != resp.Response || got == resp.Response {
				t.Fatalf("streamed %q, replaced by %q, reply %q", got, replaced, resp.Response)
			}
			if tt.want == "draft" {
				if !strings.Contains(resp.Response, "Kristen Bell") || !strings.Contains(resp.Response, "[1]") {
					t.Errorf("reply %q is not the draft", resp.Response)
				}
			} else if resp.Response != tt.want {
				t.Errorf("reply %q, want %q", resp.Response, tt.want)
			}
			if tt.notSent != "" && strings.Contains(got, tt.notSent) || strings.Contains(got, "Revised") || strings.Contains(got, "/100") {
				t.Errorf("streamed a refused line: %q", got)
			}
		})
	}
}
