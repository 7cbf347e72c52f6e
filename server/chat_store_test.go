package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

// echoScript is a WikiChat LLM that never searches and drafts "You said: <message>" (the
// generate stage's output; without evidence the final reply is WikiChat's "not sure").
func echoScript(stage string, msgs []chat.Message) string {
	switch stage {
	case chat.StageQuery:
		return "Search: no\nQuery: none\nTime: none"
	case chat.StageGenerate:
		return "You said: " + chattest.Field(chattest.LastUser(msgs), "User")
	}
	return "None"
}

// chatEnv is a real server with a real chat service (WikiChat on a scripted LLM) over a
// real conversation store.
type chatEnv struct {
	t     *testing.T
	srv   *Server
	store *chat.Store
	key   string
}

func newChatEnv(t *testing.T, so chat.StoreOptions, apiKey string) *chatEnv {
	t.Helper()
	return newScriptedChatEnv(t, echoScript, so, apiKey, chat.ClientOptions{})
}

// newScriptedChatEnv is newChatEnv on another script, with the client options co (its URL and
// model are set here), on a server that sends each turn's trace.
func newScriptedChatEnv(t *testing.T, script chattest.Script, so chat.StoreOptions, apiKey string, co chat.ClientOptions) *chatEnv {
	t.Helper()
	return newChatServerEnv(t, script, so, co, Options{APIKey: apiKey, ChatTrace: true}, nil)
}

// newChatServerEnv is newScriptedChatEnv on a server of options o (its chat service and
// session secret are set here) and the retriever ret (nil: one with no passages).
func newChatServerEnv(t *testing.T, script chattest.Script, so chat.StoreOptions, co chat.ClientOptions, o Options, ret chat.Retriever) *chatEnv {
	t.Helper()
	if ret == nil {
		ret = chattest.NewRetriever(nil)
	}
	llm := chattest.NewServer(script, 0)
	t.Cleanup(llm.Close)
	co.BaseURL, co.Model = llm.BaseURL(), "fake"
	client, err := chat.NewClient(co)
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := chat.LoadTemplates("")
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: ret}, chat.WikiChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := chat.OpenStore(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}, Store: store, ServerIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	o.Chat, o.SessionSecret = NewChatService(svc, store), store.SessionSecret()
	srv, _ := newTestServer(t, o)
	return &chatEnv{t: t, srv: srv, store: store, key: o.APIKey}
}

// turn posts message to conversation id ("" starts one) with session token tok ("" none).
func (e *chatEnv) turn(id, tok, message string) (int, ChatResponse) {
	e.t.Helper()
	body, _ := json.Marshal(ChatRequest{Conversation: id, Message: message})
	w := do(e.srv, "POST", "/v1/chat", string(body), e.headers(tok)...)
	var r ChatResponse
	if w.Code == 200 {
		mustJSON(e.t, w.Body.Bytes(), &r)
		if r.SessionToken != w.Header().Get(SessionHeader) {
			e.t.Errorf("session token in body %q, header %q", r.SessionToken, w.Header().Get(SessionHeader))
		}
	} else if w.Code == 404 && !strings.Contains(errorOf(e.t, w), "no such conversation") {
		e.t.Errorf("404 body %s", w.Body)
	}
	return w.Code, r
}

func (e *chatEnv) delete(id, tok string) int {
	return do(e.srv, "DELETE", "/v1/chat/"+id, "", e.headers(tok)...).Code
}

func (e *chatEnv) headers(tok string) []string {
	var h []string
	if e.key != "" {
		h = append(h, "Authorization", "Bearer "+e.key)
	}
	if tok != "" {
		h = append(h, SessionHeader, tok)
	}
	return h
}

// start begins a conversation and returns its id and the session token that owns it.
func (e *chatEnv) start(tok, message string) (id, owner string) {
	e.t.Helper()
	code, r := e.turn("", tok, message)
	if code != 200 || r.Reply == "" || r.Stages["generate"] != "You said: "+message {
		e.t.Fatalf("first turn: %d %+v", code, r)
	}
	if len(r.Conversation) != 26 {
		e.t.Errorf("conversation id %q: want 26 characters of base32 (128 bits)", r.Conversation)
	}
	if tok == "" {
		tok = r.SessionToken
	}
	return r.Conversation, tok
}

func TestChatConversationsBelongToTheirCaller(t *testing.T) {
	e := newChatEnv(t, chat.StoreOptions{}, "")
	idA, tokA := e.start("", "I am client A.")
	if tokA == "" {
		t.Fatal("no session token handed out")
	}
	idB, tokB := e.start("", "I am client B.")
	if tokB == tokA || idB == idA {
		t.Fatalf("two clients share token %q or id %q", tokA, idA)
	}
	for _, tt := range []struct {
		name, id, tok string
		want          int
	}{
		{"owner continues", idA, tokA, 200},
		{"no token", idA, "", 404},
		{"another session", idA, tokB, 404},
		{"an id the client chose", "my-own-id", tokA, 404},
		{"an id of the wrong shape", strings.Repeat("x", 600), tokA, 404},
		{"a malformed token", idA, "short", 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, r := e.turn(tt.id, tt.tok, "Still me?"); code != tt.want {
				t.Errorf("status %d, want %d: %+v", code, tt.want, r)
			}
		})
	}
	if e.delete(idA, tokB) != 404 || e.delete(idA, "") != 404 {
		t.Error("another client deleted (or learned of) A's conversation")
	}
	conv, err := e.store.Get(context.Background(), "session:"+tokA, idA)
	if err != nil || len(conv.Turns) != 2 || conv.Turns[1].User != "Still me?" {
		t.Errorf("A's conversation after B's attempts: %+v %v", conv.Turns, err)
	}
	// The cookie owns as the header does (the web page's browsers).
	w := do(e.srv, "POST", "/v1/chat", `{"conversation_id":"`+idB+`","message":"cookie"}`, "Cookie", SessionCookie+"="+tokB)
	if w.Code != 200 {
		t.Errorf("continuing by cookie: %d %s", w.Code, w.Body)
	}
}

// With an API key the key owns its conversations; a gateway sharing the key keeps its users
// apart with session tokens the server issues them (new_session), never ones it chose.
func TestChatWithAPIKeyOwnsByKey(t *testing.T) {
	e := newChatEnv(t, chat.StoreOptions{}, "s3cret-key")
	id, tok := e.start("", "hello")
	if tok != "" {
		t.Errorf("the bare key was handed a session token %q", tok)
	}
	if code, _ := e.turn(id, "", "again"); code != 200 {
		t.Errorf("key holder continues: %d", code)
	}
	// A gateway asks for a session per user.
	w := do(e.srv, "POST", "/v1/chat", `{"message":"gateway user","new_session":true}`, e.headers("")...)
	var r ChatResponse
	mustJSON(t, w.Body.Bytes(), &r)
	user1 := r.SessionToken
	if w.Code != 200 || len(user1) != 43 || w.Header().Get(SessionHeader) != user1 {
		t.Fatalf("new_session: %d token %q", w.Code, user1)
	}
	idU := r.Conversation
	if code, _ := e.turn(idU, user1, "more"); code != 200 {
		t.Errorf("the gateway user continues: %d", code)
	}
	_, user2 := e.start("", "second user") // the bare key again: no token
	for _, tt := range []struct{ name, tok string }{
		{"the bare key", user2},
		{"a token the gateway chose", "user-one-0123456789"},
	} {
		if code, _ := e.turn(idU, tt.tok, "peek"); code != 404 {
			t.Errorf("%s continued a gateway user's conversation: %d", tt.name, code)
		}
	}
	if w := do(e.srv, "POST", "/v1/chat", `{"message":"x","new_session":true,"conversation_id":"`+idU+`"}`, e.headers(user1)...); w.Code != 400 {
		t.Errorf("new_session with a conversation: %d", w.Code)
	}
}

func TestChatDelete(t *testing.T) {
	e := newChatEnv(t, chat.StoreOptions{}, "")
	id, tok := e.start("", "forget me")
	for _, tt := range []struct {
		name string
		do   func() int
		want int
	}{
		{"delete", func() int { return e.delete(id, tok) }, 200},
		{"continue deleted", func() int { c, _ := e.turn(id, tok, "hello?"); return c }, 404},
		{"delete again", func() int { return e.delete(id, tok) }, 404},
	} {
		if got := tt.do(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	if e.store.Len() != 0 {
		t.Errorf("%d conversations left", e.store.Len())
	}
}

func TestChatEviction(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newChatEnv(t, chat.StoreOptions{MaxConversations: 2, IdleTTL: time.Hour, Now: func() time.Time { return now }}, "")
	c1, tok := e.start("", "one")
	c2, _ := e.start(tok, "two")
	now = now.Add(time.Minute)
	if code, _ := e.turn(c1, tok, "one again"); code != 200 { // c1 is now the most recent
		t.Fatal(code)
	}
	c3, _ := e.start(tok, "three") // evicts c2, the least recently used
	for _, tt := range []struct {
		id   string
		want int
	}{{c1, 200}, {c2, 404}, {c3, 200}} {
		if code, _ := e.turn(tt.id, tok, "still there?"); code != tt.want {
			t.Errorf("LRU: conversation %s: %d, want %d", tt.id, code, tt.want)
		}
	}
	now = now.Add(59 * time.Minute) // idle exactly the TTL: kept
	if code, _ := e.turn(c1, tok, "just in time"); code != 200 {
		t.Errorf("TTL: used within the hour: %d", code)
	}
	now = now.Add(61 * time.Minute)
	if code, _ := e.turn(c1, tok, "too late"); code != 404 {
		t.Errorf("TTL: idle past the hour: %d", code)
	}
	e.start(tok, "four") // sweeps c3, idle too
	if e.store.Len() != 1 {
		t.Errorf("TTL: %d conversations kept, want 1", e.store.Len())
	}
}

func TestChatCaps(t *testing.T) {
	for _, tt := range []struct {
		name      string
		so        chat.StoreOptions
		turns     int
		wantKept  int
		wantFirst int // index of the oldest kept turn
	}{
		{"max turns", chat.StoreOptions{MaxTurns: 2}, 4, 2, 2},
		{"max history bytes", chat.StoreOptions{MaxHistoryBytes: 1}, 3, 1, 2}, // the latest turn is always kept
		{"under the caps", chat.StoreOptions{}, 3, 3, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newChatEnv(t, tt.so, "")
			id, tok := e.start("", "turn 0")
			for i := 1; i < tt.turns; i++ {
				if code, _ := e.turn(id, tok, "turn "+string(rune('0'+i))); code != 200 {
					t.Fatal(code)
				}
			}
			conv, err := e.store.Get(context.Background(), "session:"+tok, id)
			if err != nil || len(conv.Turns) != tt.wantKept || conv.Turns[0].Index != tt.wantFirst || conv.Dropped != tt.wantFirst {
				t.Errorf("kept %d turns from %d (dropped %d), want %d from %d: %v", len(conv.Turns), conv.Turns[0].Index, conv.Dropped, tt.wantKept, tt.wantFirst, err)
			}
		})
	}
}

func TestChatStoreSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	e := newChatEnv(t, chat.StoreOptions{Path: path}, "")
	id, tok := e.start("", "remember this")
	if code, _ := e.turn(id, tok, "and this"); code != 200 {
		t.Fatal(code)
	}
	e.srv.Close()
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := newChatEnv(t, chat.StoreOptions{Path: path}, "")
	if code, r := e2.turn(id, tok, "still there?"); code != 200 || r.Conversation != id {
		t.Fatalf("after restart: %d %+v", code, r)
	}
	if code, _ := e2.turn(id, "", "peek"); code != 404 {
		t.Errorf("after restart, a caller without the token: %d", code)
	}
	conv, err := e2.store.Get(context.Background(), "session:"+tok, id)
	if err != nil || len(conv.Turns) != 3 || conv.Turns[0].User != "remember this" || conv.Turns[2].Index != 2 {
		t.Errorf("after restart: %+v %v", conv.Turns, err)
	}
	if e2.delete(id, tok) != 200 {
		t.Fatal("delete")
	}
	e2.store.Close()
	e3 := newChatEnv(t, chat.StoreOptions{Path: path}, "")
	if e3.store.Len() != 0 {
		t.Errorf("a deleted conversation came back after a restart")
	}
}

// A streamed first turn hands out the session token too: in the header, before the first
// event, and in the done event.
func TestChatStreamStartsASession(t *testing.T) {
	e := newChatEnv(t, chat.StoreOptions{}, "")
	w := do(e.srv, "POST", "/v1/chat", `{"message":"hello","stream":true}`)
	tok := w.Header().Get(SessionHeader)
	events := sseEvents(t, w.Body.String())
	var done ChatResponse
	last := events[len(events)-1]
	if last[0] != "done" || json.Unmarshal([]byte(last[1]), &done) != nil || tok == "" || done.SessionToken != tok {
		t.Fatalf("header token %q, last event %q", tok, last)
	}
	if code, _ := e.turn(done.Conversation, tok, "again"); code != 200 {
		t.Errorf("continuing a streamed conversation: %d", code)
	}
}

// The session cookie is Secure where the client speaks HTTPS to a proxy in front, and not over
// plain HTTP, where a browser would drop a Secure cookie and every turn would start a session.
func TestChatSessionCookieSecureBehindHTTPS(t *testing.T) {
	e := newChatEnv(t, chat.StoreOptions{}, "")
	for _, tt := range []struct {
		proto  string
		secure bool
	}{{"", false}, {"http", false}, {"https", true}, {"HTTPS", true}} {
		w := do(e.srv, "POST", "/v1/chat", `{"message":"hello"}`, "X-Forwarded-Proto", tt.proto)
		cookies := w.Result().Cookies()
		if w.Code != 200 || len(cookies) != 1 || cookies[0].Name != SessionCookie || cookies[0].Secure != tt.secure || !cookies[0].HttpOnly {
			t.Errorf("X-Forwarded-Proto %q: %d, cookies %+v", tt.proto, w.Code, cookies)
		}
	}
}
