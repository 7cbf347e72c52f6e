package itest

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

var scifact = sharedtest.Join("data/beir-scifact/corpus.jsonl")

// buildSciFact indexes the first n SciFact abstracts (0: all) and returns a rerank engine.
func buildSciFact(tb testing.TB, n int) (*rerank.Retriever, *search.Index) {
	tb.Helper()
	dir := tb.TempDir()
	in := scifact
	if n > 0 {
		src, err := os.Open(scifact)
		if err != nil {
			tb.Fatal(err)
		}
		defer src.Close()
		in = filepath.Join(dir, "scifact.jsonl")
		out, err := os.Create(in)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(src)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for i := 0; i < n && sc.Scan(); i++ {
			out.Write(append(sc.Bytes(), '\n'))
		}
		out.Close()
	}
	idx := filepath.Join(dir, "index")
	b, err := indexer.Open(tb.Context(), indexer.Location{Dir: idx})
	if err != nil {
		tb.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Build(tb.Context(), indexer.Options{
		Inputs: []indexer.InputSpec{{Path: in, Options: corpus.Options{Format: corpus.FormatJSONL, Source: "scifact"}}}}); err != nil {
		tb.Fatal(err)
	}
	ix, err := search.Open(tb.Context(), indexer.Location{Dir: idx}, search.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	eng, err := rerank.NewRetriever(ix, rerank.RetrieverOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return eng, ix
}

// script answers from what the prompts contain: summaries are the passages' first sentences,
// the first claim is supported only if its evidence mentions white matter, the second claim
// (invented in 1850) is refuted.
func script(stage string, msgs []chat.Message) string {
	p := chattest.LastUser(msgs)
	switch stage {
	case chat.StageQuery:
		return "Search: yes\nQuery: diffusion tensor MRI newborn cerebral white matter\nTime: none"
	case chat.StageSummarize:
		_, block, ok := strings.Cut(p, "<<<UNTRUSTED ")
		if !ok || !strings.Contains(strings.ToLower(block), "white matter") {
			return "None"
		}
		_, body, _ := strings.Cut(block, " | ")
		first, _, _ := strings.Cut(body, ". ")
		return "- " + first + "."
	case chat.StageGenerate:
		return "Diffusion tensor MRI tracks white matter maturation in newborns. It was invented in 1850."
	case chat.StageClaims:
		return "1. Diffusion tensor MRI tracks cerebral white matter maturation in newborns.\n2. Diffusion tensor MRI was invented in 1850."
	case chat.StageVerify:
		// The claim, not the bot's reply the verifier is also shown, decides.
		if strings.Contains(chattest.Field(p, "Claim"), "1850") || !strings.Contains(strings.ToLower(p[strings.Index(p, "Evidence:"):]), "white matter") {
			return "Reasoning: the evidence does not say this.\nVerdict: REFUTES"
		}
		return "Reasoning: the abstract reports it.\nVerdict: SUPPORTS"
	case chat.StageDraft:
		_, facts, _ := strings.Cut(p, "Verified facts:\n")
		return strings.ReplaceAll(strings.TrimSpace(facts), "- ", "")
	case chat.StageRefine:
		return "Relevance: 100/100\nNaturalness: 100/100\nNon-repetition: 100/100\nTemporal correctness: 100/100\nRevised response: " + chattest.Field(p, "Reply")
	}
	return "None"
}

func newService(tb testing.TB, llm chat.Completer, eng *rerank.Retriever, terms chat.TermStats) *chat.Service {
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		tb.Fatal(err)
	}
	wc, err := chat.NewWikiChat(chat.Deps{LLM: llm, Templates: tpl, Retriever: chat.RetrieverFunc(eng.Search), Terms: terms}, chat.WikiChatOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

func TestWikiChatOverSciFactIndex(t *testing.T) {
	eng, ix := buildSciFact(t, 600)
	llm := chattest.NewServer(script, 0)
	defer llm.Close()
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	svc := newService(t, client, eng, ix)
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "What does diffusion MRI show about newborn white matter?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Response, "1850") || !strings.Contains(resp.Response, "microstructural development in cerebral white matter") {
		t.Errorf("response %q, dropped %+v", resp.Response, resp.Turn.Dropped)
	}
	// The verifier's SUPPORTS is not enough: no passage says "tracks ... maturation".
	if !slices.ContainsFunc(resp.Turn.Dropped, func(d chat.DroppedSentence) bool {
		return d.Stage == chat.StageVerify && strings.Contains(d.Text, "tracks")
	}) {
		t.Errorf("the claim the passage does not state was not dropped: %+v", resp.Turn.Dropped)
	}
	// SciFact doc 4983 is "Microstructural development of human newborn cerebral white matter
	// assessed in vivo by diffusion tensor magnetic resonance imaging".
	if !slices.ContainsFunc(resp.Turn.Passages, func(p chat.PassageRef) bool { return p.Title != "" && strings.HasPrefix(p.ID, "4983") }) {
		t.Errorf("the index did not retrieve SciFact 4983: %+v", resp.Turn.Passages)
	}
}

// BenchmarkWikiChatTurnSciFact measures one wikichat turn over the full SciFact index with an
// in-process LLM, so every microsecond is Kairos's: prompts, parsing, orchestration and
// retrieval with the time reranker (3 retrievals: the planned query and one per claim).
func BenchmarkWikiChatTurnSciFact(b *testing.B) {
	eng, ix := buildSciFact(b, 0)
	svc := newService(b, chattest.Completer{Script: script}, eng, ix)
	stage := map[string]time.Duration{}
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "What does diffusion MRI show about newborn white matter?"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += resp.Turn.Duration
		for _, s := range resp.Turn.Stages {
			stage[s.Stage] += s.Duration - s.LLMTime
		}
	}
	for n, d := range stage {
		b.ReportMetric(float64(d.Microseconds())/float64(b.N), n+"-us")
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "turn-us")
}
