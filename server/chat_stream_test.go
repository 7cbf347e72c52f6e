package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
)

// A streamed turn sends only sentences that passed its checks, as token events that make up
// the reply, then done with the same reply: a refinement's second revision ("Napoleon did it.")
// and its pleasantries, with no fact that passed, never stream; the not-sure reply does.
func TestChatStreamSendsOnlyCheckedSentences(t *testing.T) {
	script := func(stage string, msgs []chat.Message) string {
		if stage == chat.StageRefine {
			return "Relevance: ok 90/100\nRevised response: Sorry, I have no idea at all.\nRevised response: Napoleon did it."
		}
		return echoScript(stage, msgs)
	}
	e := newScriptedChatEnv(t, script, chat.StoreOptions{}, "", chat.ClientOptions{})
	w := do(e.srv, "POST", "/v1/chat", `{"message":"who discovered vitamin D?","stream":true}`)
	var kinds []string
	var tokens strings.Builder
	var done ChatResponse
	for _, ev := range sseEvents(t, w.Body.String()) {
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev[0] {
			kinds = append(kinds, ev[0])
		}
		switch ev[0] {
		case "token":
			var tok map[string]string
			mustJSON(t, []byte(ev[1]), &tok)
			tokens.WriteString(tok["token"])
		case "done":
			mustJSON(t, []byte(ev[1]), &done)
		}
	}
	if strings.Join(kinds, ",") != "token,done" {
		t.Fatalf("events %v, want token, done", kinds)
	}
	if tokens.String() != done.Reply || strings.Contains(tokens.String(), "Napoleon") {
		t.Errorf("streamed %q, done %q", tokens.String(), done.Reply)
	}
	conv, err := e.store.Get(context.Background(), "session:"+w.Header().Get(SessionHeader), done.Conversation)
	if err != nil || conv.Turns[0].Bot != done.Reply {
		b, _ := json.Marshal(conv)
		t.Errorf("stored %s %v", b, err)
	}
}

// A turn's answer, whole or streamed, carries none of the LLM's unchecked text unless the
// server sends the trace (--chat-trace): a refuted draft and its claims stay on the server.
func TestChatAnswerCarriesNoUncheckedText(t *testing.T) {
	const lie = "Napoleon Bonaparte discovered vitamin D in 1850."
	script := func(stage string, msgs []chat.Message) string {
		switch stage {
		case chat.StageGenerate:
			return lie
		case chat.StageClaims:
			return "- " + lie
		}
		return echoScript(stage, msgs)
	}
	for _, trace := range []bool{false, true} {
		e := newChatServerEnv(t, script, chat.StoreOptions{}, chat.ClientOptions{}, Options{ChatTrace: trace}, nil)
		for _, body := range []string{`{"message":"who discovered vitamin D?"}`, `{"message":"who discovered vitamin D?","stream":true}`} {
			w := do(e.srv, "POST", "/v1/chat", body)
			if w.Code != 200 {
				t.Fatalf("%s: %d %s", body, w.Code, w.Body)
			}
			if got := strings.Contains(w.Body.String(), "Napoleon"); got != trace {
				t.Errorf("trace %v, %s: the LLM's unchecked text in the answer: %v\n%s", trace, body, got, w.Body)
			}
		}
	}
}

// A turn whose retrieval fails answers with the failure's status and no word of the query,
// which the LLM wrote; the log keeps it.
func TestChatRetrievalFailureQuotesNoQuery(t *testing.T) {
	script := func(stage string, msgs []chat.Message) string {
		if stage == chat.StageQuery {
			return "Search: yes\nQuery: Napoleon discovered vitamin D in 1850\nTime: none"
		}
		return echoScript(stage, msgs)
	}
	for _, tc := range []struct {
		err    error
		status int
	}{{live.ErrNotLoaded, 503}, {live.ErrInvalidQuery, 400}} {
		failing := chat.RetrieverFunc(func(_ context.Context, q rerank.Query) (rerank.Result, error) {
			return rerank.Result{}, fmt.Errorf("%w: %q", tc.err, q.Text)
		})
		e := newChatServerEnv(t, script, chat.StoreOptions{}, chat.ClientOptions{}, Options{}, failing)
		for _, body := range []string{`{"message":"who discovered vitamin D?"}`, `{"message":"who discovered vitamin D?","stream":true}`} {
			w := do(e.srv, "POST", "/v1/chat", body)
			if w.Code != tc.status || strings.Contains(w.Body.String(), "Napoleon") || !strings.Contains(w.Body.String(), "retrieval failed") {
				t.Errorf("%v, %s: %d %s", tc.err, body, w.Code, w.Body)
			}
		}
	}
}

// With an API key, the turns that start sessions (asked for, or replacing a token the server
// never issued) count against the key's bucket: a caller cannot escape the chat rate limit by
// starting a session a turn.
func TestChatNewSessionsCountAgainstTheKey(t *testing.T) {
	e := newChatServerEnv(t, echoScript, chat.StoreOptions{}, chat.ClientOptions{}, Options{APIKey: "k", ChatRatePerMinute: 1, ChatBurst: 2}, nil)
	var codes []int
	for _, tok := range []string{"", "", "", "AAAAAAAAAAAAAAAAAAAAAA"} {
		body, hdr := `{"message":"hi","new_session":true}`, []string{"Authorization", "Bearer k"}
		if tok != "" {
			body, hdr = `{"message":"hi"}`, append(hdr, SessionHeader, tok)
		}
		codes = append(codes, do(e.srv, "POST", "/v1/chat", body, hdr...).Code)
	}
	if !slices.Equal(codes, []int{200, 200, 429, 429}) {
		t.Errorf("new sessions with a burst of 2: %v, want 200 200 429 429", codes)
	}
}

// chatFrom runs a chat turn from the client at address addr, in session tok and conversation
// conv ("" for none), and returns the status and the answer, its session token from the header.
func chatFrom(srv http.Handler, addr, tok, conv string) (int, ChatResponse) {
	body := `{"message":"hi"}`
	if conv != "" {
		body = `{"message":"hi","conversation_id":"` + conv + `"}`
	}
	r := httptest.NewRequest("POST", "/v1/chat", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.RemoteAddr = addr + ":40000"
	if tok != "" {
		r.Header.Set(SessionHeader, tok)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	var cr ChatResponse
	json.Unmarshal(w.Body.Bytes(), &cr)
	cr.SessionToken = w.Header().Get(SessionHeader)
	return w.Code, cr
}

// Without an API key every turn counts against the client's address, whatever session it
// presents: sessions cost nothing to mint, and counted per session a client ran a burst in
// each. Another address has its own bucket.
func TestChatRateLimitIsTheClients(t *testing.T) {
	e := newChatServerEnv(t, echoScript, chat.StoreOptions{}, chat.ClientOptions{}, Options{ChatRatePerMinute: 1, ChatBurst: 2}, nil)
	turn := func(addr, tok string) (int, string) {
		code, r := chatFrom(e.srv, addr, tok, "")
		return code, r.SessionToken
	}
	var codes []int
	var toks []string
	for range 2 { // two sessions, a turn each: the burst
		c, tok := turn("192.0.2.1", "")
		codes, toks = append(codes, c), append(toks, tok)
	}
	for _, tok := range toks { // each session again: over the client's limit
		c, _ := turn("192.0.2.1", tok)
		codes = append(codes, c)
	}
	c, _ := turn("192.0.2.2", "")
	codes = append(codes, c)
	if !slices.Equal(codes, []int{200, 200, 429, 429, 200}) || toks[0] == "" || toks[1] == "" {
		t.Errorf("turns: %v (sessions %q), want 200 200 429 429 200", codes, toks)
	}
}

// Without an API key one client starts at most ChatNewPerDay conversations a day (a burst of
// that many, up to 100): sessions cost nothing, so a client could fill the conversation store
// and lock every newcomer out. Its own conversations go on; another address starts its own.
func TestChatNewConversationsPerClient(t *testing.T) {
	e := newChatServerEnv(t, echoScript, chat.StoreOptions{}, chat.ClientOptions{}, Options{ChatNewPerDay: 2}, nil)
	turn := func(addr, tok, conv string) (int, ChatResponse) { return chatFrom(e.srv, addr, tok, conv) }
	c1, first := turn("192.0.2.1", "", "")
	c2, _ := turn("192.0.2.1", "", "")
	c3, _ := turn("192.0.2.1", "", "")
	c4, _ := turn("192.0.2.1", first.SessionToken, first.Conversation)
	c5, _ := turn("192.0.2.2", "", "")
	if got := []int{c1, c2, c3, c4, c5}; !slices.Equal(got, []int{200, 200, 429, 200, 200}) {
		t.Errorf("new, new, new, continued, another address: %v; want 200 200 429 200 200", got)
	}
}

// A turn reports its LLM usage stage by stage and in all, the conversation's so far (turns the
// caps dropped included), and /metrics counts the same tokens and their cost.
func TestChatUsageAndMetrics(t *testing.T) {
	e := newScriptedChatEnv(t, echoScript, chat.StoreOptions{MaxTurns: 1}, "", chat.ClientOptions{PricePrompt: 3, PriceCompletion: 15})
	id, tok := e.start("", "first")
	code, r := e.turn(id, tok, "second")
	if code != 200 || r.Usage == nil || r.ConversationUsage == nil || r.Pipeline != "wikichat" {
		t.Fatalf("%d %+v", code, r)
	}
	var sum ChatUsage
	for _, st := range r.Trace {
		if u := st.Usage; u != nil {
			sum.PromptTokens += u.PromptTokens
			sum.CompletionTokens += u.CompletionTokens
			sum.Calls += u.Calls
			sum.Cost += u.Cost
		}
	}
	u := *r.Usage
	if u.Calls == 0 || u.PromptTokens == 0 || u.EstimatedCalls != 0 || sum.PromptTokens != u.PromptTokens ||
		sum.CompletionTokens != u.CompletionTokens || sum.Calls != u.Calls {
		t.Errorf("turn usage %+v, stages sum to %+v", u, sum)
	}
	if want := (float64(u.PromptTokens)*3 + float64(u.CompletionTokens)*15) / 1000; math.Abs(u.Cost-want) > 1e-9 {
		t.Errorf("cost %v, want %v", u.Cost, want)
	}
	// Both turns cost the same calls; the first was dropped by the one-turn cap.
	if c := *r.ConversationUsage; c.Calls != 2*u.Calls || c.PromptTokens <= u.PromptTokens {
		t.Errorf("conversation usage %+v after two turns of %+v", c, u)
	}
	metrics := do(e.srv, "GET", "/metrics", "").Body.String()
	var prompt, cost float64
	for _, l := range strings.Split(metrics, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch {
		case strings.HasPrefix(l, "kairos_chat_llm_tokens_total{") && strings.Contains(l, `kind="prompt"`) && strings.Contains(l, `pipeline="wikichat"`):
			prompt += v
		case strings.HasPrefix(l, "kairos_chat_llm_cost_total{"):
			cost += v
		}
	}
	if c := *r.ConversationUsage; int(prompt) != c.PromptTokens || math.Abs(cost-c.Cost) > 1e-9 {
		t.Errorf("/metrics: %v prompt tokens costing %v; the conversation: %+v", prompt, cost, c)
	}
}
