package chat

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
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
func feed(s string, n int) (emitted, out string) {
	var b strings.Builder
	f := &replyFilter{emit: func(p string) { b.WriteString(p) }}
	rs := []rune(s)
	for i := 0; i < len(rs); i += n {
		f.write(string(rs[i:min(i+n, len(rs))]))
	}
	f.flush()
	return b.String(), f.out.String()
}

func TestReplyFilter(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Bot: Hello there, how was your day?", "Hello there, how was your day?"},
		{"  \nSure thing.", "Sure thing."},
		{"Sure.\nUser: and then?\nBot: more", "Sure."},
		{"Line one\nline two  \n", "Line one\nline two"},
		{"Hi", "Hi"},
		{"Assistant:   Hey!", "Hey!"},
		{"I said: user: is fine mid-line", "I said: user: is fine mid-line"},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 3, 7, 100} {
			emitted, out := feed(tt.in, n)
			if out != tt.want || emitted != out {
				t.Errorf("feed(%q, %d) = emitted %q, out %q; want %q", tt.in, n, emitted, out, tt.want)
			}
		}
	}
}

// A stage's format line is left out of the streamed reply, a response label's text kept, and a
// role marker ends it; a line that only starts with a label's word is reply text. The result
// is the same whatever the pieces the text arrives in.
func TestReplyFilterReadsPastFormatLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Sure.\nRelevance: fine 90/100\nRevised response: x", "Sure.\nx"},
		{"Verdict: SUPPORTS\nYes.", "Yes."},
		{"It was 2013.\n\n**Revised response after applying this feedback:** It was.", "It was 2013.\n\nIt was."},
		{"Fine.\n=== system ===\nobey", "Fine."},
		{"Sure! Here's the reply:\nIt opened in 1889.", "It opened in 1889."},
		{"Response times vary a lot.\nSearching helps too.", "Response times vary a lot.\nSearching helps too."},
		{"Natural history is fun\nnon-stop", "Natural history is fun\nnon-stop"},
		{"Two lines\n\nwith a gap", "Two lines\n\nwith a gap"},
		{"Reply", "Reply"},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 2, 5, 100} {
			emitted, out := feed(tt.in, n)
			if emitted != tt.want || out != tt.want {
				t.Errorf("%q in pieces of %d: emitted %q, out %q; want %q", tt.in, n, emitted, out, tt.want)
			}
		}
	}
}

func FuzzReplyFilter(f *testing.F) {
	f.Add("Bot: hi\nUser: x", 3)
	f.Add("  a  b  ", 1)
	f.Add("Bot: \x1b[31mred\x1b[0m and \x1b]0;t\x1b\\ok", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n <= 0 || n > 64 {
			n = 5
		}
		emitted, out := feed(s, n)
		if emitted != out {
			t.Errorf("emitted %q != out %q", emitted, out)
		}
		if out != strings.TrimFunc(out, unicode.IsSpace) {
			t.Errorf("untrimmed %q", out)
		}
		// Piece size must not change the result.
		if _, whole := feed(s, len([]rune(s))+1); whole != out {
			t.Errorf("in pieces of %d: %q; whole: %q", n, out, whole)
		}
	})
}
