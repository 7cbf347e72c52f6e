package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// streamTurn runs one streamed turn and returns the response, the pieces streamed and the
// stages the LLM was asked to stream.
func streamTurn(t *testing.T, script chattest.Script, opts chat.WikiChatOptions) (chat.TurnResponse, []string, []string) {
	t.Helper()
	svc, llm := citeService(t, script, opts)
	var pieces []string
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, &chat.Stream{
		Token: func(s string) { pieces = append(pieces, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	var streamedStages []string
	for _, c := range llm.Calls() {
		if c.Stream {
			streamedStages = append(streamedStages, c.Stage)
		}
	}
	return resp, pieces, streamedStages
}

const feedback = "Relevance: fine 90/100\nNaturalness: fine 90/100\nNon-repetition: fine 100/100\nTemporal correctness: fine 100/100\n"

// withTopic answers the commonsense topic tracker.
func withTopic(s chattest.Script) chattest.Script {
	return func(stage string, msgs []chat.Message) string {
		if stage == chat.StageCSTopic {
			return "Topic: the 2013 Disney film Frozen"
		}
		return s(stage, msgs)
	}
}

// The last stage of wikichat and commonsense streams as the LLM writes it (the refinement's
// revised response, never its feedback; the draft when refine is skipped; the commonsense
// response), one checked sentence a piece: what streamed is the reply.
func TestWikiChatStreamsTheFinalStage(t *testing.T) {
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
		{"commonsense, WikiChat's stages", keepDraft, chat.WikiChatOptions{QueryGen: "commonsense", CommonsenseResponse: chat.CommonsenseWikiChat}, chat.StageRefine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.PassagesPerQuery = 3
			resp, pieces, streamed := streamTurn(t, withTopic(citingScript(tt.refine)), tt.opts)
			got := strings.Join(pieces, "")
			if len(streamed) != 1 || streamed[0] != tt.stage {
				t.Errorf("stages streamed from the LLM: %v, want [%s]", streamed, tt.stage)
			}
			if got != resp.Response || !strings.Contains(got, "Kristen Bell") || !strings.Contains(got, "[1]") {
				t.Errorf("streamed %q, reply %q", got, resp.Response)
			}
			if n := strings.Count(resp.Response, "]."); len(pieces) != n {
				t.Errorf("%d pieces for %d sentences: %q", len(pieces), n, pieces)
			}
			if strings.Contains(got, "/100") || strings.Contains(got, "Revised") {
				t.Errorf("the refinement's format streamed: %q", got)
			}
		})
	}
}

// Nothing streamed is taken back: a revision of which no fact passes gives way to the draft
// before anything of it is sent, a revision cut at the token limit loses its cut sentence, and
// a draft followed by feedback lines is read for its sentence.
func TestWikiChatStreamNeverTakesBack(t *testing.T) {
	tests := []struct {
		name    string
		refine  func(string) string
		opts    chat.WikiChatOptions
		want    string // the reply: "draft", or the text
		notSent string
	}{
		{"two revisions of pleasantries", func(d string) string {
			return feedback + "Revised response: They loved it.\nRevised response: It was fine."
		}, chat.WikiChatOptions{}, "draft", "It was fine"},
		{"revision cut at the token limit", func(d string) string {
			return chattest.CutAtLimit + feedback + "Revised response: Frozen is a 2013 film that"
		}, chat.WikiChatOptions{}, "draft", "film that"},
		{"draft with feedback lines", nil, chat.WikiChatOptions{Skip: []string{chat.StageRefine}}, "Frozen is a 2013 film [1].", "Relevance"},
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
			resp, pieces, _ := streamTurn(t, script, tt.opts)
			got := strings.Join(pieces, "")
			if got != resp.Response {
				t.Fatalf("streamed %q, reply %q", got, resp.Response)
			}
			if tt.want == "draft" {
				if !strings.Contains(resp.Response, "Kristen Bell") || !strings.Contains(resp.Response, "[1]") {
					t.Errorf("reply %q is not the draft", resp.Response)
				}
			} else if resp.Response != tt.want {
				t.Errorf("reply %q, want %q", resp.Response, tt.want)
			}
			if strings.Contains(got, tt.notSent) || strings.Contains(got, "Revised") || strings.Contains(got, "/100") {
				t.Errorf("streamed a refused line: %q", got)
			}
		})
	}
}
