package chat

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// --llm-retries counts retries: 0 is none (it made 4, the default, since MaxRetries reads 0 as
// "default"), and the other values are what they say.
func TestRetriesFlag(t *testing.T) {
	for _, tt := range []struct {
		arg       string
		wantCalls int32
	}{{"", 1 + DefaultMaxRetries}, {"0", 1}, {"-1", 1}, {"2", 3}} {
		t.Run("--llm-retries="+tt.arg, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				http.Error(w, "busy", http.StatusServiceUnavailable)
			}))
			defer srv.Close()
			var o ClientOptions
			fs := flag.NewFlagSet("chat", flag.ContinueOnError)
			o.Flags(fs)
			args := []string{"--llm-url", srv.URL, "--llm-model", "m"}
			if tt.arg != "" {
				args = append(args, "--llm-retries", tt.arg)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			o.Sleep = func(context.Context, time.Duration) error { return nil }
			c, err := NewClient(o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")}); err == nil {
				t.Fatal("no error from a server that always fails")
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
		})
	}
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	(&ClientOptions{}).Flags(fs)
	if err := fs.Set("llm-retries", "-2"); err == nil {
		t.Error("--llm-retries -2 accepted")
	}
}

// A stream cut by the client's own timeout says so, with that timeout, and is not reported as
// the caller's deadline (the server said "timed out after 2m0s", its chat timeout, of a stream
// the 60 s LLM timeout had cut).
func TestStreamTimeoutNamesTheLLMTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
		w.(http.Flusher).Flush()
		hang(r)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) { o.Timeout = 80 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.Stream(ctx, CompletionRequest{Stage: "sicl", Messages: userMsg("x")}, func(string) {})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Timeout != 80*time.Millisecond || !strings.Contains(err.Error(), "timed out after 80ms") {
		t.Fatalf("err = %v, want a TimeoutError of 80ms", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v reads as the caller's deadline", err)
	}
}
