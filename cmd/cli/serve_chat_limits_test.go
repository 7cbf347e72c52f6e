package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/server"
)

// Without an API key a client's chat rate is its address's: past its burst a turn gets a 429
// with Retry-After, in any session of it, so that minting sessions does not escape the limit
// (another address's bucket: server.TestChatRateLimitIsTheClients). Refusals are counted in
// /metrics.
func TestServeChatRateLimit(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	// One turn a minute, three back to back: the test's turns never earn a token back.
	s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "1", "--chat-rate-burst", "3")

	a := s.turn("", "", "Who directed Frozen?").chat(t) // the address's first
	tokA, idA := a.SessionToken, a.Conversation
	for i := range 2 { // the rest of the address's burst of three
		if r := s.turn(idA, tokA, "Who directed Frozen?"); r.code != 200 {
			t.Fatalf("A's turn %d: %d %s", i+2, r.code, r.body)
		}
	}
	r := s.turn(idA, tokA, "Who directed Frozen?")
	retry, _ := strconv.Atoi(r.hdr.Get("Retry-After"))
	if r.code != 429 || retry < 1 || retry > 60 || !strings.Contains(r.errorMessage(t), "--chat-rate-limit") {
		t.Fatalf("A past its burst: %d Retry-After %q %s", r.code, r.hdr.Get("Retry-After"), r.body)
	}
	// Without an API key the bucket is the address's: a new session from it is no way around
	// the limit (each session had a burst of its own).
	if r := s.turn("", "", "Who directed Frozen?"); r.code != 429 || r.hdr.Get("Retry-After") == "" {
		t.Errorf("a new session from the limited address: %d %s", r.code, r.body)
	}
	if n := s.metric("kairos_chat_refusals_total", `reason="rate_limited"`); n != 2 {
		t.Errorf("kairos_chat_refusals_total{reason=rate_limited} = %v, want 2", n)
	}
}

// One owner evicts only its own conversations: past --chat-max-conversations-per-owner its
// oldest goes; in a full store an owner with none is refused (503, Retry-After) rather than
// evicting others' recent ones, and an owner with some evicts its own.
func TestServeChatOwnerQuota(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "-1", "--chat-max-conversations", "4",
		"--chat-max-conversations-per-owner", "2", "--chat-evict-idle", "1h")
	start := func(tok string) (id, owner string) {
		t.Helper()
		r := s.turn("", tok, "Who directed Frozen?").chat(t)
		if tok == "" {
			tok = r.SessionToken
		}
		return r.Conversation, tok
	}
	get := func(id, tok string) int {
		t.Helper()
		return s.do("GET", "/v1/chat/"+id, "", server.SessionHeader, tok).code
	}
	a1, tokA := start("")
	a2, _ := start(tokA)
	a3, _ := start(tokA) // A's third: its first goes
	b1, tokB := start("")
	c1, tokC := start("")
	for _, c := range []struct {
		name, id, tok string
		want          int
	}{{"a1", a1, tokA, 404}, {"a2", a2, tokA, 200}, {"a3", a3, tokA, 200}, {"b1", b1, tokB, 200}, {"c1", c1, tokC, 200}} {
		if got := get(c.id, c.tok); got != c.want {
			t.Errorf("after A's third: %s %d, want %d", c.name, got, c.want)
		}
	}
	// The store is full (a2, a3, b1, c1, all recent): D, who has none, is refused.
	r := s.turn("", "", "Who directed Frozen?")
	retry, _ := strconv.Atoi(r.hdr.Get("Retry-After"))
	if r.code != 503 || retry < 3500 || retry > 3600 || !strings.Contains(r.errorMessage(t), "--chat-max-conversations") {
		t.Fatalf("D in a full store: %d Retry-After %q %s", r.code, r.hdr.Get("Retry-After"), r.body)
	}
	// B, who has one, evicts its own (b1), not A's older a2.
	b2, _ := start(tokB)
	for _, c := range []struct {
		name, id, tok string
		want          int
	}{{"a2", a2, tokA, 200}, {"a3", a3, tokA, 200}, {"b1", b1, tokB, 404}, {"b2", b2, tokB, 200}, {"c1", c1, tokC, 200}} {
		if got := get(c.id, c.tok); got != c.want {
			t.Errorf("after B's second: %s %d, want %d", c.name, got, c.want)
		}
	}
	for _, m := range []struct {
		name, label string
		want        float64
	}{
		{"kairos_chat_refusals_total", `reason="store_full"`, 1},
		{"kairos_chat_conversations_evicted_total", `reason="owner_quota"`, 1},
		{"kairos_chat_conversations_evicted_total", `reason="store_full"`, 1},
		{"kairos_chat_conversations", "", 4},
		{"kairos_chat_conversation_owners", "", 3},
	} {
		if got := s.metric(m.name, m.label); got != m.want {
			t.Errorf("%s{%s} = %v, want %v", m.name, m.label, got, m.want)
		}
	}
}
