package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/server"
)

// Only session tokens the server issued are accepted. A well-formed token it did not issue
// (made up, or an issued one altered) owns nothing: continuing, reading or deleting a
// conversation with it is the 404 of an unknown conversation, the same body byte for byte; a
// turn starting a conversation with it is issued a new token. Tokens are signed with a
// secret kept in the conversation store, so they survive a restart with the conversations.
func TestServeChatSessionTokens(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	store := filepath.Join(t.TempDir(), "chat.db")
	args := []string{"--chat-store", store, "--chat-rate-limit", "-1"}
	s := chatServe(t, idx, llm.BaseURL(), args...)
	first := s.turn("", "", "Who directed Frozen?").chat(t)
	tok, id := first.SessionToken, first.Conversation
	if len(tok) != 43 {
		t.Fatalf("session token %q: want 43 characters (16 random bytes and a 16-byte MAC)", tok)
	}
	altered := []byte(tok)
	altered[5] = 'A' // another character of the alphabet, in a byte all of whose bits count
	if tok[5] == 'A' {
		altered[5] = 'B'
	}
	var rnd [32]byte
	rand.Read(rnd[:])
	forged := map[string]string{
		"made up":                  base64.RawURLEncoding.EncodeToString(rnd[:]),
		"an issued token, altered": string(altered),
		"any 16 characters":        "aaaaaaaaaaaaaaaa",
	}
	// The answer an unknown conversation gets, from the owner itself.
	unknown := s.turn("abcdefghijklmnopqrstuvwxyz", tok, "hello?")
	if unknown.code != 404 {
		t.Fatalf("an unknown conversation: %d %s", unknown.code, unknown.body)
	}
	for name, f := range forged {
		for _, r := range []reply{
			s.turn(id, f, "Who directed Frozen?"),
			s.do("GET", "/v1/chat/"+id, "", server.SessionHeader, f),
			s.do("DELETE", "/v1/chat/"+id, "", server.SessionHeader, f),
			s.do("POST", "/v1/chat", `{"conversation_id":"`+id+`","message":"hi"}`, "Cookie", server.SessionCookie+"="+f),
		} {
			if r.code != 404 || !bytes.Equal(r.body, unknown.body) {
				t.Errorf("%s: %d %s, want the unknown conversation's 404 %s", name, r.code, r.body, unknown.body)
			}
		}
		// Starting a conversation with it: a new session, not the forged one.
		r := s.turn("", f, "Who directed Frozen?").chat(t)
		if r.SessionToken == "" || r.SessionToken == f || len(r.SessionToken) != 43 {
			t.Errorf("%s starting a conversation: session token %q", name, r.SessionToken)
		}
	}
	if r := s.turn(id, "short", "hi"); r.code != 400 {
		t.Errorf("a malformed token: %d", r.code)
	}

	// A restart on the same store: the issued token still owns its conversation, the forged
	// ones still own nothing.
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = chatServe(t, idx, llm.BaseURL(), args...)
	if r := s.turn(id, tok, "Who directed Frozen?"); r.code != 200 {
		t.Errorf("the issued token after a restart: %d %s", r.code, r.body)
	}
	for name, f := range forged {
		if r := s.do("GET", "/v1/chat/"+id, "", server.SessionHeader, f); r.code != 404 {
			t.Errorf("%s after a restart: %d", name, r.code)
		}
	}
	// A store wiped (a new file) makes a new secret: the old token owns nothing there.
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = chatServe(t, idx, llm.BaseURL(), "--chat-store", filepath.Join(t.TempDir(), "other.db"))
	if r := s.do("GET", "/v1/chat/"+id, "", server.SessionHeader, tok); r.code != 404 {
		t.Errorf("a token of another store's secret: %d", r.code)
	}
}

// GET /v1/chat/{id} returns the conversation to its owner (turns with the user's text, the
// reply, citations and grounded), and the same 404 to another owner and for an unknown id.
func TestServeChatGetConversation(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "-1")
	first := s.turn("", "", "Who directed Frozen?").chat(t)
	tok, id := first.SessionToken, first.Conversation
	second := s.turn(id, tok, "Who made it?", `"pipeline": "mpc"`).chat(t)
	other := s.turn("", "", "Who directed Frozen?").chat(t)

	r := s.do("GET", "/v1/chat/"+id, "", server.SessionHeader, tok)
	var conv server.ChatConversation
	if r.code != 200 || json.Unmarshal(r.body, &conv) != nil {
		t.Fatalf("GET by its owner: %d %s", r.code, r.body)
	}
	if conv.Conversation != id || len(conv.Turns) != 2 || conv.Created == "" || conv.Usage == nil {
		t.Fatalf("conversation %s", r.body)
	}
	t0, t1 := conv.Turns[0], conv.Turns[1]
	c0, _ := json.Marshal(t0.Citations)
	cFirst, _ := json.Marshal(first.Citations)
	if t0.Index != 0 || t0.User != "Who directed Frozen?" || t0.Reply != first.Reply || t0.Pipeline != "wikichat" || !t0.Grounded ||
		len(first.Citations) == 0 || !bytes.Equal(c0, cFirst) {
		t.Errorf("turn 0 %+v, the turn's answer %+v", t0, first)
	}
	if t1.Index != 1 || t1.User != "Who made it?" || t1.Reply != second.Reply || t1.Pipeline != "mpc" || t1.Grounded {
		t.Errorf("turn 1 %+v", t1)
	}
	unknown := s.do("GET", "/v1/chat/abcdefghijklmnopqrstuvwxyz", "", server.SessionHeader, tok)
	for name, r := range map[string]reply{
		"another owner":     s.do("GET", "/v1/chat/"+id, "", server.SessionHeader, other.SessionToken),
		"no token":          s.do("GET", "/v1/chat/"+id, ""),
		"unknown":           unknown,
		"an id of 600":      s.do("GET", "/v1/chat/"+strings.Repeat("x", 600), "", server.SessionHeader, tok),
		"another's id, own": s.do("GET", "/v1/chat/"+other.Conversation, "", server.SessionHeader, tok),
	} {
		if r.code != 404 || !bytes.Equal(r.body, unknown.body) {
			t.Errorf("%s: %d %s, want %s", name, r.code, r.body, unknown.body)
		}
	}
}

// grounded says whether the reply was checked against its sources, in the JSON answer and
// in the stream's done event: wikichat's and commonsense's are, mpc's is not.
func TestServeChatGrounded(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "-1")
	for _, tt := range []struct {
		pipeline string
		grounded bool
	}{{"wikichat", true}, {"commonsense", true}, {"mpc", false}} {
		for _, stream := range []bool{false, true} {
			extra := `"pipeline": "` + tt.pipeline + `"`
			if stream {
				extra += `, "stream": true`
			}
			r := s.turn("", "", "Who directed Frozen?", extra)
			var got map[string]any
			if stream {
				body := string(r.body)
				i := strings.LastIndex(body, "event: done\ndata: ")
				if r.code != 200 || i < 0 {
					t.Fatalf("%s stream: %d %s", tt.pipeline, r.code, body)
				}
				json.Unmarshal([]byte(strings.TrimSpace(body[i+len("event: done\ndata: "):])), &got)
			} else if r.code != 200 || json.Unmarshal(r.body, &got) != nil {
				t.Fatalf("%s: %d %s", tt.pipeline, r.code, r.body)
			}
			if g, ok := got["grounded"].(bool); !ok || g != tt.grounded || got["pipeline"] != tt.pipeline {
				t.Errorf("%s (stream %v): grounded %v (present %v), pipeline %v", tt.pipeline, stream, got["grounded"], ok, got["pipeline"])
			}
		}
	}
}
