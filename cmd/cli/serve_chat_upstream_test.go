package cli

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// upstreamSecret is what a failing LLM writes in its body: neither it nor the LLM's address
// may reach a client of kairos serve.
const upstreamSecret = "SECRET-UPSTREAM-7f3a dial tcp 10.9.8.7:8443: connection refused"

// An LLM that fails is answered 502 (a failed or unusable reply, or no LLM at all), 503 with
// Retry-After (the LLM's 429, its own Retry-After passed on when sane) or 504 (too slow), as
// JSON and as a stream, and the answer never holds the LLM's body or an address; the server
// log keeps the detail. /metrics counts the failed calls by outcome.
func TestServeChatUpstreamFailures(t *testing.T) {
	idx, _ := leadsIndex(t, wikiLink)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	for _, tt := range []struct {
		name       string
		llm        http.HandlerFunc // nil: deadURL
		flags      []string
		status     int
		retryAfter string // "": not checked
		msg        string
		outcome    string // kairos_chat_llm_calls_total's label for the failed calls
	}{
		{"500 with a secret body", func(w http.ResponseWriter, r *http.Request) { http.Error(w, upstreamSecret, 500) }, nil,
			502, "", "the LLM server failed: it answered HTTP 500", "upstream_error"},
		{"401", func(w http.ResponseWriter, r *http.Request) { http.Error(w, upstreamSecret, http.StatusUnauthorized) }, nil,
			502, "", "the LLM server refused the request: it answered HTTP 401", "rejected"},
		{"200 that is no completion", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>"+upstreamSecret+"</html>") }, nil,
			502, "", "the LLM's answer was not a usable completion", "bad_response"},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			http.Error(w, upstreamSecret, http.StatusTooManyRequests)
		}, nil, 503, "7", "the LLM is rate limiting this server", "rate_limited"},
		{"429 with a Retry-After of a day", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "86400")
			http.Error(w, upstreamSecret, http.StatusTooManyRequests)
		}, nil, 503, "300", "the LLM is rate limiting this server", "rate_limited"},
		{"hangs past --llm-timeout", hangingLLM, []string{"--llm-timeout", "300ms"},
			504, "1", "the LLM did not answer within its timeout of 300ms (--llm-timeout)", "timeout"},
		{"hangs past --chat-timeout", hangingLLM, []string{"--chat-timeout", "400ms"},
			504, "1", "the chat turn did not finish within 400ms (--chat-timeout)", "canceled"},
		{"not listening", nil, nil, 502, "", "the LLM could not be reached (check --llm-url", "unreachable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := deadURL
			if tt.llm != nil {
				srv := httptest.NewServer(tt.llm)
				defer srv.Close()
				url = srv.URL + "/v1"
			}
			s := chatServe(t, idx, url, append([]string{"--llm-retries", "0", "--chat-rate-limit", "-1"}, tt.flags...)...)
			for _, stream := range []bool{false, true} {
				var r reply
				if stream {
					r = s.turn("", "", "Who directed Frozen?", `"stream": true`)
				} else {
					r = s.turn("", "", "Who directed Frozen?")
				}
				msg := r.errorMessage(t)
				if r.code != tt.status || !strings.HasPrefix(msg, tt.msg) || r.hdr.Get("Content-Type") != "application/json" {
					t.Errorf("stream %v: %d %q, want %d %q", stream, r.code, msg, tt.status, tt.msg)
				}
				if tt.retryAfter != "" && r.hdr.Get("Retry-After") != tt.retryAfter {
					t.Errorf("stream %v: Retry-After %q, want %q", stream, r.hdr.Get("Retry-After"), tt.retryAfter)
				}
				body := string(r.body)
				for _, leak := range []string{"SECRET", "10.9.8.7", "127.0.0.1", "dial tcp", "connection refused", strings.TrimPrefix(url, "http://")} {
					if strings.Contains(body, leak) {
						t.Errorf("stream %v: the answer holds %q: %s", stream, leak, body)
					}
				}
			}
			if n := s.metric("kairos_chat_llm_calls_total", `outcome="`+tt.outcome+`"`); n < 2 {
				t.Errorf("kairos_chat_llm_calls_total{outcome=%q} = %v, want the failed calls of both turns", tt.outcome, n)
			}
			if n := s.metric("kairos_chat_llm_calls_total", `outcome="ok"`); n != 0 {
				t.Errorf("%v calls counted ok", n)
			}
			if tt.llm != nil && tt.status == 502 && !strings.Contains(s.log.String(), "SECRET-UPSTREAM-7f3a") {
				t.Errorf("the server log lacks the LLM's answer:\n%s", s.log)
			}
		})
	}
}

// hangingLLM answers nothing until its client goes away.
func hangingLLM(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}
