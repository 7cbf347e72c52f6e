package chat_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/corpus"
)

var citePassages = []corpus.Passage{
	{ID: "Frozen#0", Title: "Frozen (2013 film)", Section: "Production", URL: "https://en.wikipedia.org/wiki/Frozen_(2013_film)",
		Text: "Frozen (2013 film) | Frozen is a 2013 American animated musical fantasy film produced by Walt Disney Animation Studios. " +
			"Frozen was directed by Chris Buck and Jennifer Lee."},
	{ID: "Kristen Bell#3", Title: "Kristen Bell", Section: "Career", URL: "https://en.wikipedia.org/wiki/Kristen_Bell",
		Text: "Kristen Bell | Kristen Bell voiced Princess Anna in the 2013 Disney animated film Frozen."},
	{ID: "Idina Menzel#0", Title: "Idina Menzel", URL: "https://en.wikipedia.org/wiki/Idina_Menzel",
		Text: "Idina Menzel | Idina Menzel is an American actress and singer from New York."},
}

var factLineRe = regexp.MustCompile(`(?m)^- (.*)\. \[(\d+)\]$`)

// citingScript answers every WikiChat stage faithfully; its draft writes the summary facts in
// reverse order (not the claim, the last fact), each with its source number, and adds a
// sentence with a number it invented.
// refine is its refine answer given the draft.
func citingScript(refine func(draft string) string) chattest.Script {
	return func(stage string, msgs []chat.Message) string {
		p := chattest.LastUser(msgs)
		switch stage {
		case chat.StageQuery:
			return "Search: yes\nQuery: Frozen 2013 film\nTime: none"
		case chat.StageSummarize:
			blocks := untrustedBlocks(p)
			if len(blocks) == 0 {
				return "None"
			}
			_, body, _ := strings.Cut(blocks[0], " | ")
			first, _, _ := strings.Cut(body, ". ")
			return "- " + strings.TrimSuffix(first, ".") + "."
		case chat.StageGenerate:
			return "Frozen was directed by Chris Buck and Jennifer Lee."
		case chat.StageClaims:
			return "- Frozen was directed by Chris Buck and Jennifer Lee."
		case chat.StageVerify:
			return "Reasoning: the evidence says so.\nVerdict: SUPPORTS"
		case chat.StageDraft:
			var sents []string
			facts := factLineRe.FindAllStringSubmatch(p, -1)
			for _, m := range facts[:len(facts)-1] {
				sents = append([]string{m[1] + " [" + m[2] + "]."}, sents...)
			}
			return strings.Join(append(sents, "It is well worth watching [7]."), " ")
		case chat.StageRefine:
			return refine(chattest.Field(p, "Reply"))
		}
		return "unexpected stage " + stage
	}
}

func keepDraft(draft string) string {
	return "Relevance: fine 90/100\nNaturalness: fine 90/100\nNon-repetition: fine 100/100\nTemporal correctness: fine 100/100\nRevised response: " + draft
}

func citeService(t *testing.T, script chattest.Script, opts chat.WikiChatOptions) (*chat.Service, *chattest.Server) {
	t.Helper()
	llm := chattest.NewServer(script, 0)
	t.Cleanup(llm.Close)
	client, err := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake", Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: chattest.NewRetriever(citePassages),
		Now: func() time.Time { return time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC) }}, opts)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, llm
}

var replyMarkerRe = regexp.MustCompile(`\[(\d+)\]`)

// The reply's markers are the passages that support each sentence, numbered in reading order
// (title, section, URL); the sentence with the invented [7], which no passage supports, is
// gone, and recorded as dropped. Streamed or not, the text and the citations are the same.
func TestWikiChatInlineCitations(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			svc, _ := citeService(t, citingScript(keepDraft), chat.WikiChatOptions{PassagesPerQuery: 3})
			var streamed strings.Builder
			var sink *chat.Stream
			if stream {
				sink = &chat.Stream{Token: func(s string) { streamed.WriteString(s) }}
			}
			resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, sink)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("reply: %s", resp.Response)
			cites := resp.Turn.Citations
			if strings.Contains(resp.Response, "[7]") || strings.Contains(resp.Response, "worth watching") {
				t.Errorf("the invented sentence survived: %q", resp.Response)
			}
			if !slices.ContainsFunc(resp.Turn.Dropped, func(d chat.DroppedSentence) bool { return strings.Contains(d.Text, "worth watching") }) {
				t.Errorf("the invented sentence is not recorded as dropped: %+v", resp.Turn.Dropped)
			}
			if len(cites) != 2 {
				t.Fatalf("%d citations, want 2 (Kristen Bell, Frozen): %+v", len(cites), cites)
			}
			for i, m := range replyMarkerRe.FindAllStringSubmatch(resp.Response, -1) {
				if i == 0 && m[1] != "1" {
					t.Errorf("the first marker is [%s], want [1]", m[1])
				}
			}
			byID := map[string]corpus.Passage{}
			for _, p := range citePassages {
				byID[p.ID] = p
			}
			for i, c := range cites {
				p := byID[c.ID]
				if c.N != i+1 || c.Title != p.Title || c.Section != p.Section || c.URL != p.URL || len(c.Facts) == 0 {
					t.Errorf("citation %d = %+v, passage %+v", i+1, c, p)
				}
				// The sentence before the marker is one of the passage's facts.
				used := false
				for _, f := range c.Facts {
					used = used || strings.Contains(resp.Response, strings.TrimSuffix(f, ".")+fmt.Sprintf(" [%d].", c.N))
				}
				if !used {
					t.Errorf("citation [%d] (%s): no fact of %q is cited with it in the reply", c.N, c.ID, c.Facts)
				}
			}
			// Kristen Bell was source 2 of the draft prompt, and is [1] as the reply reads.
			if cites[0].ID != "Kristen Bell#3" || cites[1].ID != "Frozen#0" || len(cites[1].Facts) != 2 {
				t.Errorf("citations in reply order: %+v", cites)
			}
			if stream && streamed.String() != resp.Response {
				t.Errorf("streamed %q, reply %q", streamed.String(), resp.Response)
			}
		})
	}
}

// A reply without markers (a model that ignored the instruction) is cited all the same: each
// sentence with the passage that supports it.
func TestWikiChatCitationsWithoutMarkers(t *testing.T) {
	svc, _ := citeService(t, citingScript(func(string) string {
		return keepDraft("Frozen is a 2013 Disney film directed by Chris Buck and Jennifer Lee.")
	}), chat.WikiChatOptions{PassagesPerQuery: 3})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Tell me about Frozen."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Response != "Frozen is a 2013 Disney film directed by Chris Buck and Jennifer Lee [1]." {
		t.Errorf("reply %q", resp.Response)
	}
	if c := resp.Turn.Citations; len(c) != 1 || c[0].N != 1 || c[0].ID != "Frozen#0" || c[0].URL == "" {
		t.Errorf("citations %+v", c)
	}
}
