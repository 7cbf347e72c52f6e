package chat

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func sseHandler(pieces []string, done bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		fmt.Fprint(w, ": keep-alive comment\n\n")
		for _, p := range pieces {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", p)
		}
		if done {
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}
}

func TestClientStream(t *testing.T) {
	tests := []struct {
		name      string
		handler   func(n int32) http.HandlerFunc // by attempt, 1-based
		wantText  string
		wantCalls int32
		wantErr   string
	}{
		{"deltas and usage", func(int32) http.HandlerFunc { return sseHandler([]string{"Hel", "lo ", "wörld"}, true) }, "Hello wörld", 1, ""},
		{"retried before the first delta", func(n int32) http.HandlerFunc {
			if n == 1 {
				return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }
			}
			return sseHandler([]string{"ok"}, true)
		}, "ok", 2, ""},
		{"not retried after partial output", func(int32) http.HandlerFunc { return sseHandler([]string{"par", "tial"}, false) }, "partial", 1, "partial output"},
		{"server ignores stream", func(int32) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, okBody("whole answer", 1, 2)) }
		}, "whole answer", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tt.handler(calls.Add(1))(w, r)
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, nil)
			var got strings.Builder
			out, err := c.Stream(context.Background(), CompletionRequest{Stage: "sicl", Messages: userMsg("x")}, func(s string) { got.WriteString(s) })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if out.Text != tt.wantText {
				t.Errorf("text %q, want %q", out.Text, tt.wantText)
			}
			if got.String() != tt.wantText {
				t.Errorf("streamed %q, want %q", got.String(), tt.wantText)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls.Load(), tt.wantCalls)
			}
			if tt.name == "deltas and usage" && (out.Usage.TotalTokens != 10 || c.Usage()["sicl"].CompletionTokens != 3) {
				t.Errorf("usage %+v / %+v", out.Usage, c.Usage())
			}
		})
	}
}

// feed writes s into a filter in pieces of n runes (streamed deltas are JSON strings, so they
// never split a rune) and returns what it emitted.
// feed reads s for its content in pieces of n runes and returns what was passed on and the
// content.
func feed(s string, n int) (emitted, out string) {
	var b strings.Builder
	r := newContentReader(replyLabel, false)
	r.emit = func(p string) { b.WriteString(p) }
	rs := []rune(s)
	for i := 0; i < len(rs); i += n {
		r.write(string(rs[i:min(i+n, len(rs))]))
	}
	r.finish(false)
	return b.String(), r.out.String()
}
