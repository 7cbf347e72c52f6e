package chat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/corpus"
)

var scifactCorpus = chattest.SharedPath("data/beir-scifact/corpus.jsonl")

func loadSciFact(tb testing.TB) []corpus.Passage {
	tb.Helper()
	f, err := os.Open(scifactCorpus)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpus.Passage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var d struct{ ID, Title, Text string }
		var raw map[string]string
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			tb.Fatal(err)
		}
		d.ID, d.Title, d.Text = raw["_id"], raw["title"], raw["text"]
		words := strings.Fields(d.Title + " | " + d.Text)
		out = append(out, corpus.Passage{ID: d.ID + "#0", DocID: d.ID, Title: d.Title, Text: strings.Join(words[:min(120, len(words))], " ")})
	}
	return out
}

// sciScript answers a SciFact-grounded turn: it summarizes each passage to its first sentence,
// makes two claims, supports the first and refutes the second.
func sciScript(stage string, msgs []chat.Message) string {
	p := chattest.LastUser(msgs)
	switch stage {
	case chat.StageQuery:
		return "Search: yes\nQuery: diffusion tensor MRI newborn cerebral white matter\nTime: none"
	case chat.StageSummarize:
		blocks := untrustedBlocks(p)
		if len(blocks) == 0 {
			return "None"
		}
		_, body, _ := strings.Cut(blocks[0], " | ")
		first, _, _ := strings.Cut(body, ". ")
		return "- " + first + "."
	case chat.StageGenerate:
		return "Diffusion tensor MRI shows white matter maturing in newborns. It was invented in 1850."
	case chat.StageClaims:
		return "1. Diffusion tensor MRI shows cerebral white matter maturing in newborns.\n2. Diffusion tensor MRI was invented in 1850."
	case chat.StageVerify:
		if strings.Contains(p, "1850") {
			return "Reasoning: nothing says 1850.\nVerdict: REFUTES"
		}
		return "Reasoning: the abstract reports it.\nVerdict: SUPPORTS"
	case chat.StageDraft:
		_, facts, _ := strings.Cut(p, "Verified facts:\n")
		return strings.ReplaceAll(strings.TrimSpace(facts), "- ", "")
	case chat.StageRefine:
		return "Relevance: 90/100\nNaturalness: 80/100\nNon-repetition: 100/100\nTemporal correctness: 100/100\nRevised response: " + chattest.Field(p, "Reply")
	}
	return "None"
}

// BenchmarkWikiChatTurn measures one wikichat turn over a TF-IDF retriever on the 5,183 SciFact
// abstracts. "inproc" answers in-process (no HTTP): stage time minus LLM time is Kairos's own
// overhead (prompt rendering, parsing, orchestration, retrieval calls). "http" goes through the
// real client to a local fake server. Per-stage means are reported as <stage>-us (wall) and
// <stage>-kairos-us (wall minus LLM time; for stages with parallel calls this undercounts).
func BenchmarkWikiChatTurn(b *testing.B) {
	passages := loadSciFact(b)
	ret := chattest.NewRetriever(passages)
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		b.Fatal(err)
	}
	llm := chattest.NewServer(sciScript, 0)
	defer llm.Close()
	client, err := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake", Concurrency: 8})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		llm  chat.Completer
	}{{"inproc", chattest.Completer{Script: sciScript}}, {"http", client}} {
		b.Run(tc.name, func(b *testing.B) {
			wc, err := chat.NewWikiChat(chat.Deps{LLM: tc.llm, Templates: tpl, Retriever: ret}, chat.WikiChatOptions{})
			if err != nil {
				b.Fatal(err)
			}
			svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
			wall := map[string]time.Duration{}
			own := map[string]time.Duration{}
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "What does diffusion tensor MRI show about newborn white matter?"}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if strings.Contains(resp.Response, "1850") {
					b.Fatal("refuted claim in the answer")
				}
				total += resp.Turn.Duration
				for _, s := range resp.Turn.Stages {
					wall[s.Stage] += s.Duration
					own[s.Stage] += max(0, s.Duration-s.LLMTime)
				}
			}
			names := make([]string, 0, len(wall))
			for n := range wall {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				b.ReportMetric(float64(wall[n].Microseconds())/float64(b.N), n+"-us")
				b.ReportMetric(float64(own[n].Microseconds())/float64(b.N), n+"-kairos-us")
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "turn-us")
		})
	}
}
