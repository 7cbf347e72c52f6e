package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
)

var recentLeads = chattest.SharedPath("data/wikichat-topics/recent_articles_en.json")

func loadLeads(t testing.TB) []corpus.Passage {
	t.Helper()
	ps, err := chattest.LoadLeads(recentLeads, 120)
	if err != nil {
		t.Fatalf("loading shared data: %v", err)
	}
	return ps
}

var untrustedRe = regexp.MustCompile(`(?s)<<<UNTRUSTED [^\n]*\n(.*?)\nEND UNTRUSTED>>>`)

// untrustedBlocks returns the delimited passages of a prompt.
func untrustedBlocks(prompt string) []string {
	var out []string
	for _, m := range untrustedRe.FindAllStringSubmatch(prompt, -1) {
		out = append(out, m[1])
	}
	return out
}

// contentWords are the words of 4+ letters, or any number: what a fact-check must find.
func contentWords(s string) []string {
	var out []string
	for _, w := range chat.Words(s) {
		if len(w) >= 4 || strings.ContainsAny(w, "0123456789") {
			switch w {
			case "that", "with", "from", "film", "released", "which", "this":
				continue
			}
			out = append(out, w)
		}
	}
	return out
}

// wikiScript plays a WikiChat LLM. Its answers depend on what the prompts contain — the
// retrieved passages above all — so the test checks the pipeline's plumbing for real: a claim
// is SUPPORTED only if the evidence the Retriever found contains all its content words.
type wikiScript struct {
	query, generate, claims string
	// generating, when set, is opened when the generate stage's call arrives, and the query
	// stage's call waits for it (10 s at most): a test of the branches' overlap that does not
	// depend on how fast a loaded machine starts the second branch.
	generating *gate
}

// gate is a one-way signal that may be opened more than once (a retried call).
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

func (s wikiScript) answer(stage string, msgs []chat.Message) string {
	p := chattest.LastUser(msgs)
	switch stage {
	case chat.StageQuery:
		if s.generating != nil {
			select {
			case <-s.generating.ch:
			case <-time.After(10 * time.Second):
			}
		}
		return s.query
	case chat.StageSummarize:
		var bullets []string
		query := contentWords(chattest.Field(p, "Query"))
		for _, block := range untrustedBlocks(p) {
			_, body, _ := strings.Cut(block, " | ")
			for _, sent := range strings.SplitAfter(body, ". ") {
				hits := 0
				for _, w := range query {
					if strings.Contains(strings.ToLower(sent), w) {
						hits++
					}
				}
				if hits >= 2 {
					bullets = append(bullets, "- "+strings.TrimSpace(sent))
				}
			}
		}
		if len(bullets) == 0 {
			return "None"
		}
		return "Here is what I found:\n" + strings.Join(bullets, "\n")
	case chat.StageGenerate:
		if s.generating != nil {
			s.generating.open()
		}
		return s.generate
	case chat.StageClaims:
		return s.claims
	case chat.StageVerify:
		claim := chattest.Field(p, "Claim")
		evidence := strings.ToLower(strings.Join(untrustedBlocks(p), " "))
		for _, w := range contentWords(claim) {
			if !strings.Contains(evidence, w) {
				return fmt.Sprintf("Reasoning: the evidence never mentions %q.\nVerdict: REFUTES", w)
			}
		}
		return "Reasoning: every part of the claim is in the evidence.\nVerdict: SUPPORTS"
	case chat.StageDraft:
		var facts []string
		_, list, _ := strings.Cut(p, "Verified facts:")
		for _, l := range strings.Split(list, "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
				facts = append(facts, f)
			}
		}
		return strings.Join(facts, " ")
	case chat.StageRefine:
		draft := chattest.Field(p, "Reply")
		return "Relevance: answers it 95/100\nNaturalness: fine 90/100\nNon-repetition: ok 100/100\nTemporal correctness: ok 100/100\nRevised response: " + draft + " Anything else?"
	}
	return "unexpected stage " + stage
}

type wikiEnv struct {
	llm *chattest.Server
	ret *chattest.Retriever
	svc *chat.Service
}

func newWikiEnv(t testing.TB, s wikiScript, latency time.Duration, opts chat.WikiChatOptions) *wikiEnv {
	t.Helper()
	llm := chattest.NewServer(s.answer, latency)
	t.Cleanup(llm.Close)
	client, err := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake", Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chat.LoadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	ret := chattest.NewRetriever(loadLeads(t))
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: ret,
		Now: func() time.Time { return time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC) }}, opts)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	if err != nil {
		t.Fatal(err)
	}
	return &wikiEnv{llm, ret, svc}
}

func stageNames(tr []chat.StageTrace) []string {
	var out []string
	for _, s := range tr {
		out = append(out, s.Stage)
	}
	slices.Sort(out)
	return out
}

func findStage(t *testing.T, tr []chat.StageTrace, name string) chat.StageTrace {
	t.Helper()
	for _, s := range tr {
		if s.Stage == name {
			return s
		}
	}
	t.Fatalf("no stage %q in trace %v", name, stageNames(tr))
	return chat.StageTrace{}
}

func TestWikiChatSupportedClaimsOnly(t *testing.T) {
	env := newWikiEnv(t, wikiScript{
		query:      "Search: yes\nQuery: Frozen 2013 animated film directed\nTime: none",
		generate:   "Frozen was directed by Chris Buck and Jennifer Lee. It was released in 1998 by Pixar.",
		claims:     "1. Frozen was directed by Chris Buck and Jennifer Lee.\n2. Frozen was released in 1998 by Pixar.",
		generating: newGate(),
	}, 40*time.Millisecond, chat.WikiChatOptions{})

	resp, err := env.svc.Turn(context.Background(), chat.TurnRequest{Message: "Who directed the movie Frozen?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	final := resp.Response
	t.Logf("final: %q", final)
	if !strings.Contains(final, "directed by Chris Buck and Jennifer Lee") {
		t.Errorf("final answer lost the supported fact: %q", final)
	}
	if strings.Contains(final, "1998") || strings.Contains(final, "Pixar") {
		t.Errorf("final answer kept the refuted claim: %q", final)
	}
	if !strings.HasSuffix(final, "Anything else?") {
		t.Errorf("final answer is not the refined one: %q", final)
	}

	// Every stage ran, and only the draft prompt's facts reached the draft.
	want := []string{"claims", "draft", "evidence", "generate", "query", "refine", "retrieve", "summarize", "verify"}
	if got := stageNames(resp.Turn.Stages); !slices.Equal(got, want) {
		t.Errorf("stages %v, want %v", got, want)
	}
	for _, c := range env.llm.Calls() {
		if c.Stage == "" {
			t.Errorf("unrecognised prompt: %q", c.Messages[0].Content)
		}
		if c.Stage == chat.StageDraft && strings.Contains(chattest.LastUser(c.Messages), "Pixar") {
			t.Errorf("refuted claim reached the draft prompt")
		}
	}

	// Stages 1-2 and 3-4 overlapped in time: the query call waited for the generate call
	// (wikiScript.generating), which it would have for 10 s had the branches run one after
	// the other.
	q, g := findStage(t, resp.Turn.Stages, "query"), findStage(t, resp.Turn.Stages, "generate")
	if g.Start >= q.Start+q.Duration {
		t.Errorf("generate started at %v, after query ended at %v: branches did not run in parallel", g.Start, q.Start+q.Duration)
	}

	// The retriever saw the planned query with its time need and the time reranker, then
	// one evidence query per claim with the claim's own (auto) time need.
	qs := env.ret.Queries()
	if len(qs) != 3 {
		t.Fatalf("retriever got %d queries, want 3", len(qs))
	}
	var sawPlan, sawClaims int
	for _, q := range qs {
		if !slices.Equal(q.Rerank, []rerank.Stage{rerank.StageTime}) {
			t.Errorf("query %q reranks with %v", q.Text, q.Rerank)
		}
		switch {
		case q.Text == "Frozen 2013 animated film directed" && q.K == 3 && q.Time.Kind == timex.KindNone:
			sawPlan++
		case strings.HasPrefix(q.Text, "Frozen was") && q.K == 2 && q.Time.Kind == timex.KindAuto:
			sawClaims++
		}
	}
	if sawPlan != 1 || sawClaims != 2 {
		t.Errorf("queries %+v", qs)
	}

	// The verify stage's output records both verdicts; passages carry ids.
	var verdicts []struct {
		Claim   string
		Verdict chat.Verdict
	}
	if err := json.Unmarshal(findStage(t, resp.Turn.Stages, "verify").Output, &verdicts); err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != 2 || verdicts[0].Verdict != chat.Supports || verdicts[1].Verdict != chat.Refutes {
		t.Errorf("verdicts %+v", verdicts)
	}
	if !slices.ContainsFunc(resp.Turn.Passages, func(p chat.PassageRef) bool { return p.ID == "Frozen (2013 film)#0" }) {
		t.Errorf("passages %+v lack the Frozen lead", resp.Turn.Passages)
	}
	if resp.Turn.Usage.Calls != len(env.llm.Calls()) || resp.Turn.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v for %d calls", resp.Turn.Usage, len(env.llm.Calls()))
	}
}

func TestWikiChatNotSurePath(t *testing.T) {
	env := newWikiEnv(t, wikiScript{
		query:    "Search: yes\nQuery: winner of the 2031 Olympus Mons marathon\nTime: year=2031",
		generate: "The 2031 Olympus Mons marathon was won by Zed Xylophone.",
		claims:   "- The 2031 Olympus Mons marathon was won by Zed Xylophone.",
	}, 0, chat.WikiChatOptions{})
	resp, err := env.svc.Turn(context.Background(), chat.TurnRequest{Message: "Who won the 2031 Olympus Mons marathon?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Response, chat.DefaultNotSure) || strings.Contains(resp.Response, "Xylophone") {
		t.Errorf("response %q, want the refined not-sure reply", resp.Response)
	}
	if slices.Contains(env.llm.Stages(), chat.StageDraft) {
		t.Error("draft ran although nothing survived curation")
	}
	if qs := env.ret.Queries(); qs[0].Time.Kind != timex.KindRange && qs[1].Time.Kind != timex.KindRange {
		t.Errorf("year=2031 did not reach the retriever: %+v", qs)
	}
}

func TestWikiChatChitChatAndSkips(t *testing.T) {
	script := wikiScript{query: "Search: no\nQuery: none\nTime: none", generate: "Hello! Lovely to meet you.", claims: "None"}
	env := newWikiEnv(t, script, 0, chat.WikiChatOptions{Skip: []string{"refine"}})
	resp, err := env.svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "c1", Message: "Hi there!"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing was retrieved or verified: the stage-3 reply is not delivered unchecked (issue
	// 24); "I'm not sure" is, here unrefined since refine is skipped.
	if resp.Response != chat.DefaultNotSure || resp.ConversationID != "c1" {
		t.Errorf("chit-chat response %+v", resp)
	}
	if got := env.llm.Stages(); slices.Contains(got, chat.StageRefine) || slices.Contains(got, chat.StageVerify) || len(env.ret.Queries()) != 0 {
		t.Errorf("stages %v, queries %d: refine skipped, nothing to verify or retrieve", got, len(env.ret.Queries()))
	}
	// The second turn sees the first in its prompts.
	if _, err := env.svc.Turn(context.Background(), chat.TurnRequest{ConversationID: "c1", Message: "How are you?"}, nil); err != nil {
		t.Fatal(err)
	}
	last := env.llm.Calls()[len(env.llm.Calls())-1]
	if !strings.Contains(chattest.LastUser(last.Messages), "Bot: "+chat.DefaultNotSure) {
		t.Errorf("history missing from second turn prompt: %q", chattest.LastUser(last.Messages))
	}
}

func TestWikiChatOptionsValidate(t *testing.T) {
	for _, o := range []chat.WikiChatOptions{
		{Skip: []string{"retrieve", "generate"}}, {Skip: []string{"verify"}}, {PassagesPerQuery: -1}, {QueryGen: "magic"},
	} {
		if _, err := chat.NewWikiChat(chat.Deps{}, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := chat.NewWikiChat(chat.Deps{}, chat.WikiChatOptions{}); err == nil || !strings.Contains(err.Error(), "retriever") {
		t.Errorf("missing deps: err = %v", err)
	}
}

// Unusable outputs degrade the turn instead of failing it, and are recorded in the trace.
func TestWikiChatUnusableOutputsDegrade(t *testing.T) {
	good := wikiScript{
		generate: "Frozen was directed by Chris Buck and Jennifer Lee.",
		claims:   "1. Frozen was directed by Chris Buck and Jennifer Lee.",
	}
	script := func(stage string, msgs []chat.Message) string {
		switch stage {
		case chat.StageQuery:
			return "I would love to help with that!" // no Search/Query line
		case chat.StageSummarize:
			return "" // nothing at all
		case chat.StageRefine:
			return "Looks good to me." // no revised response
		}
		return good.answer(stage, msgs)
	}
	llm := chattest.NewServer(script, 0)
	defer llm.Close()
	client, _ := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	tpl, _ := chat.LoadTemplates("")
	ret := chattest.NewRetriever(loadLeads(t))
	wc, _ := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: ret}, chat.WikiChatOptions{})
	svc, _ := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}})
	resp, err := svc.Turn(context.Background(), chat.TurnRequest{Message: "Who directed the movie Frozen?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The query fell back to the user's words; the claim was verified on its own evidence;
	// the unusable refinement kept the draft.
	if q := ret.Queries(); q[0].Text != "Who directed the movie Frozen?" && q[1].Text != "Who directed the movie Frozen?" {
		t.Errorf("no fallback query: %+v", q)
	}
	if resp.Response != "Frozen was directed by Chris Buck and Jennifer Lee [1]." {
		t.Errorf("response %q", resp.Response)
	}
	if c := resp.Turn.Citations; len(c) != 1 || c[0].N != 1 || c[0].Title != "Frozen (2013 film)" {
		t.Errorf("citations %+v", c)
	}
	for _, name := range []string{"query", "summarize", "refine"} {
		if s := findStage(t, resp.Turn.Stages, name); len(s.Errors) == 0 || !strings.Contains(s.Errors[0], "unusable LLM output") {
			t.Errorf("stage %s errors %q", name, s.Errors)
		}
	}
}
