package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
)

// Conversations belong to their caller. With an API key the caller is the key (and, when a
// gateway sharing one key keeps its users apart, a session token the server issued each of
// them); without one it is a session token the server hands out with the first conversation
// and the client presents on later calls, in the X-Kairos-Session header or the
// kairos_session cookie.
const (
	SessionHeader = "X-Kairos-Session"
	SessionCookie = "kairos_session"
)

// ConversationDeleter is implemented by a Chatter that can delete conversations
// (DELETE /v1/chat/{id}); ErrNotFound for an unknown id or another owner's.
type ConversationDeleter interface {
	DeleteConversation(ctx context.Context, owner, id string) error
}

var sessionRe = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// A session token is 16 random bytes and the first 16 bytes of their HMAC-SHA256 under the
// server's SessionSecret, in unpadded base64url (43 characters): only the server can make
// one, and it checks one without keeping a list. The secret persists with the conversation
// store, so tokens survive a restart exactly when the conversations they own do.
const (
	tokenRandBytes = 16
	tokenMACBytes  = 16
	tokenContext   = "kairos session token v1\x00"
)

// issueToken makes a new session token.
func (s *Server) issueToken() string {
	b := make([]byte, tokenRandBytes, tokenRandBytes+tokenMACBytes)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(append(b, s.tokenMAC(b)...))
}

func (s *Server) tokenMAC(id []byte) []byte {
	m := hmac.New(sha256.New, s.opts.SessionSecret)
	m.Write([]byte(tokenContext))
	m.Write(id)
	return m.Sum(nil)[:tokenMACBytes]
}

// issued reports whether tok is a token this server (or one sharing its secret) issued.
func (s *Server) issued(tok string) bool {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) != tokenRandBytes+tokenMACBytes {
		return false
	}
	return hmac.Equal(b[tokenRandBytes:], s.tokenMAC(b[:tokenRandBytes]))
}

// sessionToken is the token the request presents, "" when none.
func sessionToken(r *http.Request) string {
	if t := r.Header.Get(SessionHeader); t != "" {
		return t
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// chatCaller is who a chat request comes from.
type chatCaller struct {
	owner string // whom its conversations belong to; "" when it owns nothing (yet)
	fresh string // a token issued to this request, for the response
	// limitKey is whom the request counts against in the chat rate limit. Without an API key
	// it is the client's address, whatever session the request presents: sessions cost
	// nothing to mint. With a key it is the owner (the key, or the key and a session a
	// gateway's user holds), and for a turn that starts a session the key.
	limitKey string
}

// chatOwner returns the caller of a chat request. start says that the request starts a
// conversation, and newSession that it asks for a session of its own (ChatRequest.NewSession).
//
// Only tokens the server issued are accepted. A well-formed token it did not issue owns
// nothing: continuing, reading or deleting a conversation with it is a 404, the answer for
// an unknown conversation, so that a forged token and a wrong id read alike; a turn that
// starts a conversation with it, or with none on a server without an API key, is issued a
// new token (a browser's cookie from a store since wiped recovers by itself). With an API
// key the key is the owner, or the key and a session token when the caller sent one or
// asked for one: a gateway sharing the key keeps its users apart with tokens the server
// issued them.
func (s *Server) chatOwner(r *http.Request, start, newSession bool) (chatCaller, error) {
	tok := sessionToken(r)
	if tok != "" && !sessionRe.MatchString(tok) {
		return chatCaller{}, badRequest("session token (%s header or %s cookie) must be 16-128 characters of A-Z a-z 0-9 _ -", SessionHeader, SessionCookie)
	}
	var c chatCaller
	valid := tok != "" && s.issued(tok)
	switch {
	case valid && !newSession: // its own session
	case start && (tok != "" || newSession || s.opts.APIKey == ""):
		// A new session: asked for, replacing a token not issued here, or the first
		// conversation of a client without a key.
		tok = s.issueToken()
		c.fresh = tok
	case s.opts.APIKey != "" && tok == "": // the bare key
	default:
		return chatCaller{limitKey: "addr:" + s.clientAddr(r)}, nil // owns nothing
	}
	if s.opts.APIKey != "" {
		c.owner = "key:" + s.opts.APIKey
		if tok != "" {
			c.owner += "\x00session:" + tok
		}
	} else {
		c.owner = "session:" + tok
	}
	c.limitKey = c.owner
	switch {
	case s.opts.APIKey == "":
		// Without a key anyone may mint sessions, each a turn: counted per session, a client
		// with many ran a burst in each (six turns in seconds against a burst of two).
		c.limitKey = "addr:" + s.clientAddr(r)
	case c.fresh != "":
		c.limitKey = "key:" + s.opts.APIKey
	}
	return c, nil
}

// clientAddr is the host of the request's remote address, or, when that peer is a trusted
// proxy (Options.TrustedProxies), the nearest address of X-Forwarded-For that is not one: the
// proxies append their peers on the right, and what lies left of the last trusted hop is the
// client's own text. A hop a trusted proxy wrote that does not parse leaves the peer: a
// misconfigured proxy's users share its limits rather than choose their own.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	client, err := netip.ParseAddr(host)
	if err != nil || !s.trustedProxy(client) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if client = a.Unmap(); !s.trustedProxy(client) {
			return client.String()
		}
	}
	return host
}

// trustedProxy reports whether a is one of Options.TrustedProxies.
func (s *Server) trustedProxy(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// setSession hands a new session token to the client: in the header (and the response body,
// ChatResponse.SessionToken) for API clients, and as a cookie for browsers; SameSite keeps
// other sites' pages from riding on it. Behind a proxy that answers over HTTPS (it says so in
// X-Forwarded-Proto) the cookie is Secure, so that no browser sends it over plain HTTP; a
// forged header can only make its own client's cookie stricter.
func setSession(w http.ResponseWriter, r *http.Request, tok string) {
	w.Header().Set(SessionHeader, tok)
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: tok, Path: "/v1/chat", HttpOnly: true,
		Secure: secure, SameSite: http.SameSiteStrictMode})
}

// conversationOwner returns the owner of the conversations a request may read or delete; without
// one it answers the 404 of an unknown conversation (or the request's error) and reports false.
func (s *Server) conversationOwner(w http.ResponseWriter, r *http.Request) (string, bool) {
	c, err := s.chatOwner(r, false, false)
	if err != nil {
		writeErr(w, err, "")
		return "", false
	}
	if c.owner == "" {
		writeErr(w, errNoConversation, "")
		return "", false
	}
	return c.owner, true
}

// handleChatDelete serves DELETE /v1/chat/{id}: 200, or 404 for an unknown conversation or
// another owner's (the two are not told apart).
func (s *Server) handleChatDelete(w http.ResponseWriter, r *http.Request) {
	d, ok := s.opts.Chat.(ConversationDeleter)
	if !ok {
		writeError(w, http.StatusNotImplemented, "deleting conversations is not configured on this server")
		return
	}
	owner, ok := s.conversationOwner(w, r)
	if !ok {
		return
	}
	if err := d.DeleteConversation(r.Context(), owner, r.PathValue("id")); err != nil {
		writeErr(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation_id": r.PathValue("id"), "deleted": true})
}

// ConversationGetter is implemented by a Chatter that can return a conversation
// (GET /v1/chat/{id}); ErrNotFound for an unknown id or another owner's.
type ConversationGetter interface {
	GetConversation(ctx context.Context, owner, id string) (ChatConversation, error)
}

// ChatConversation is the body of GET /v1/chat/{id}: the turns a conversation keeps, oldest
// first (the store's caps drop the oldest: DroppedTurns says how many went).
type ChatConversation struct {
	Conversation string     `json:"conversation_id"`
	Created      string     `json:"created"` // RFC 3339
	Turns        []ChatTurn `json:"turns"`
	DroppedTurns int        `json:"dropped_turns,omitempty"`
	Usage        *ChatUsage `json:"usage,omitempty"`
}

// ChatTurn is one turn of a conversation as GET /v1/chat/{id} returns it.
type ChatTurn struct {
	Index     int            `json:"index"`
	Time      string         `json:"time"` // RFC 3339
	Pipeline  string         `json:"pipeline"`
	User      string         `json:"user"`
	Reply     string         `json:"reply"`
	Citations []ChatCitation `json:"citations"`
	// Grounded is as in ChatResponse: whether the reply was checked against its passages.
	Grounded bool `json:"grounded"`
}

// handleChatGet serves GET /v1/chat/{id}: the conversation to its owner, 404 to anyone else
// and for an unknown id (the two are not told apart).
func (s *Server) handleChatGet(w http.ResponseWriter, r *http.Request) {
	g, ok := s.opts.Chat.(ConversationGetter)
	if !ok {
		writeError(w, http.StatusNotImplemented, "reading conversations is not configured on this server")
		return
	}
	owner, ok := s.conversationOwner(w, r)
	if !ok {
		return
	}
	// A turn in progress holds the conversation for up to the chat timeout; reading it
	// waits no longer than a search may.
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	conv, err := g.GetConversation(ctx, owner, r.PathValue("id"))
	if err != nil {
		writeErr(w, err, s.opts.Timeout.String())
		return
	}
	writeJSON(w, http.StatusOK, conv)
}
