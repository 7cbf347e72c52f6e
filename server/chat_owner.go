package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"regexp"
)

// Conversations belong to their caller. With an API key the caller is the key (and, when a
// gateway sharing one key sends its users' session tokens, the token too); without one it is
// a session token the server hands out with the first conversation and the client presents
// on later calls, in the X-Kairos-Session header or the kairos_session cookie.
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

// chatOwner returns the owner of the request's conversations. mayStart allows a new session
// (a turn starting a conversation): its token is returned as fresh. ok is false when the
// request has no owner yet and may not start one: it can own nothing.
func (s *Server) chatOwner(r *http.Request, mayStart bool) (owner, fresh string, ok bool, err error) {
	tok := sessionToken(r)
	if tok != "" && !sessionRe.MatchString(tok) {
		return "", "", false, badRequest("session token (%s header or %s cookie) must be 16-128 characters of A-Z a-z 0-9 _ -", SessionHeader, SessionCookie)
	}
	if s.opts.APIKey != "" {
		owner = "key:" + s.opts.APIKey
		if tok != "" {
			owner += "\x00session:" + tok
		}
		return owner, "", true, nil
	}
	if tok == "" {
		if !mayStart {
			return "", "", false, nil
		}
		var b [16]byte
		rand.Read(b[:])
		tok = base64.RawURLEncoding.EncodeToString(b[:]) // 128 bits
		fresh = tok
	}
	return "session:" + tok, fresh, true, nil
}

// setSession hands a new session token to the client: in the header (and the response body,
// ChatResponse.SessionToken) for API clients, and as a cookie for browsers; SameSite keeps
// other sites' pages from riding on it.
func setSession(w http.ResponseWriter, tok string) {
	w.Header().Set(SessionHeader, tok)
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: tok, Path: "/v1/chat", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// handleChatDelete serves DELETE /v1/chat/{id}: 200, or 404 for an unknown conversation or
// another owner's (the two are not told apart).
func (s *Server) handleChatDelete(w http.ResponseWriter, r *http.Request) {
	d, ok := s.opts.Chat.(ConversationDeleter)
	if !ok {
		writeError(w, http.StatusNotImplemented, "deleting conversations is not configured on this server")
		return
	}
	owner, _, known, err := s.chatOwner(r, false)
	if err != nil {
		writeErr(w, err, "")
		return
	}
	if !known {
		writeError(w, http.StatusNotFound, "no such conversation")
		return
	}
	if err := d.DeleteConversation(r.Context(), owner, r.PathValue("id")); err != nil {
		writeErr(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation_id": r.PathValue("id"), "deleted": true})
}
