package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// okBody is a minimal OpenAI-compatible answer.
func okBody(text string, prompt, completion int) string {
	b, _ := json.Marshal(map[string]any{
		"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
	return string(b)
}

// recordSleep replaces the client's sleep so tests see the waits without waiting.
type recordSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recordSleep) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func newTestClient(t *testing.T, url string, mod func(*ClientOptions)) (*Client, *recordSleep) {
	t.Helper()
	rs := &recordSleep{}
	o := ClientOptions{BaseURL: url, Model: "m", Sleep: rs.sleep, BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second}
	if mod != nil {
		mod(&o)
	}
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, rs
}

// hang waits until the client goes away. The body must be drained first: net/http only notices a
// closed connection (and cancels r.Context) once the handler has consumed the request body.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(3 * time.Second):
	}
}

func userMsg(s string) []Message { return []Message{{Role: "user", Content: s}} }

func TestClientRetries(t *testing.T) {
	tests := []struct {
		name       string
		statuses   []int  // answers before success (0 = success)
		retryAfter string // header on failures
		wantErr    bool
		wantCalls  int
		checkWaits func(t *testing.T, w []time.Duration)
	}{
		{name: "success first", statuses: []int{0}, wantCalls: 1},
		{name: "503 then ok", statuses: []int{503, 503, 0}, wantCalls: 3, checkWaits: func(t *testing.T, w []time.Duration) {
			if len(w) != 2 || w[0] > 100*time.Millisecond || w[1] > 200*time.Millisecond {
				t.Errorf("waits %v: want 2 jittered waits within 100ms, 200ms", w)
			}
		}},
		{name: "429 honours Retry-After seconds", statuses: []int{429, 0}, retryAfter: "7", wantCalls: 2, checkWaits: func(t *testing.T, w []time.Duration) {
			if len(w) != 1 || w[0] != 7*time.Second {
				t.Errorf("waits %v, want [7s]", w)
			}
		}},
		{name: "Retry-After beyond limit fails", statuses: []int{429, 0}, retryAfter: "3600", wantErr: true, wantCalls: 1},
		// 1e12 s overflowed time.Duration into a negative wait: an immediate retry (issue 24).
		{name: "Retry-After 1e12 fails, not retried at once", statuses: []int{429, 0}, retryAfter: "1e12", wantErr: true, wantCalls: 1},
		{name: "Retry-After Inf fails", statuses: []int{503, 0}, retryAfter: "Inf", wantErr: true, wantCalls: 1},
		{name: "400 is not retried", statuses: []int{400, 0}, wantErr: true, wantCalls: 1},
		{name: "gives up after MaxRetries", statuses: []int{500, 500, 500, 500, 500, 500, 0}, wantErr: true, wantCalls: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				if st := tt.statuses[min(n, len(tt.statuses)-1)]; st != 0 {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					http.Error(w, `{"error":"busy"}`, st)
					return
				}
				fmt.Fprint(w, okBody("hello", 10, 2))
			}))
			defer srv.Close()
			c, rs := newTestClient(t, srv.URL+"/v1", nil)
			out, err := c.Complete(context.Background(), CompletionRequest{Stage: "s", Messages: userMsg("hi")})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got := int(calls.Load()); got != tt.wantCalls {
				t.Errorf("server calls = %d, want %d", got, tt.wantCalls)
			}
			if err == nil && (out.Text != "hello" || out.Attempts != tt.wantCalls) {
				t.Errorf("out = %+v", out)
			}
			if tt.checkWaits != nil {
				tt.checkWaits(t, rs.waits)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {"0.5", 500 * time.Millisecond}, {"-1", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"1e12", maxRetryAfterHeader}, {"1e300", maxRetryAfterHeader}, {"Inf", maxRetryAfterHeader}, {"NaN", 0},
		{"9223372037", maxRetryAfterHeader}, // one second past the largest Duration
		{"Fri, 31 Dec 9999 23:59:59 GMT", maxRetryAfterHeader},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestClientTimeoutIsRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			hang(r) // past the per-attempt timeout
			return
		}
		fmt.Fprint(w, okBody("late", 1, 1))
	}))
	defer srv.Close()
	// A second per attempt: attempt 2 answers at once, and a timeout short enough to expire
	// while a loaded machine opens its connection would make a third attempt (hang returns
	// as soon as the client gives up, so the wait costs the first attempt's second).
	c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) { o.Timeout = time.Second })
	out, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")})
	if err != nil || out.Text != "late" || out.Attempts != 2 {
		t.Fatalf("out %+v err %v: want success on attempt 2", out, err)
	}
}

func TestClientTimeoutExhausted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hang(r)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) { o.Timeout = 20 * time.Millisecond; o.MaxRetries = 1 })
	_, err := c.Complete(context.Background(), CompletionRequest{Stage: "gen", Messages: userMsg("x")})
	if err == nil || !strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), "attempt 2") {
		t.Fatalf("err = %v, want a timeout on attempt 2", err)
	}
}

// TestClientCancellation: a call whose context ends, cancelled or past its deadline, returns
// the context's error and is not retried (the per-attempt timeout is, which a caller's
// deadline must not be mistaken for).
func TestClientCancellation(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func(arrived <-chan struct{}) (context.Context, context.CancelFunc)
		want error
	}{
		// Cancelled once the call has reached the server, not after a fixed time that a
		// loaded machine could spend before sending it.
		{"cancelled", func(arrived <-chan struct{}) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-arrived; cancel() }()
			return ctx, cancel
		}, context.Canceled},
		// A second is ample for the call to arrive first.
		{"deadline", func(<-chan struct{}) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			arrived := make(chan struct{}, 8)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				arrived <- struct{}{}
				hang(r)
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, nil)
			ctx, cancel := tc.ctx(arrived)
			defer cancel()
			start := time.Now()
			_, err := c.Complete(ctx, CompletionRequest{Messages: userMsg("x")})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if calls.Load() != 1 || time.Since(start) > 5*time.Second {
				t.Errorf("calls = %d after %v: a call whose context ended must not be retried", calls.Load(), time.Since(start))
			}
		})
	}
}

func TestClientConnectionErrorRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	c, rs := newTestClient(t, url, func(o *ClientOptions) { o.MaxRetries = 2 })
	_, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")})
	if err == nil || len(rs.waits) != 2 {
		t.Fatalf("err %v, waits %v: want failure after 2 retries", err, rs.waits)
	}
}

func TestClientKeyNeverLeaks(t *testing.T) {
	const key = "sk-test-SECRET-1234567890"
	var sawAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth.Store(r.Header.Get("Authorization"))
		// A hostile or buggy server echoes the header back in its error.
		http.Error(w, "bad auth: "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	defer srv.Close()

	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KAIROS_TEST_KEY", key)
	for _, src := range []string{"env", "file"} {
		t.Run(src, func(t *testing.T) {
			var logs bytes.Buffer
			c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) {
				o.MaxRetries = 2
				o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				if src == "env" {
					o.APIKeyEnv = "KAIROS_TEST_KEY"
				} else {
					o.APIKeyFile = keyFile
				}
			})
			_, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")})
			if err == nil {
				t.Fatal("want an error")
			}
			if sawAuth.Load() != "Bearer "+key {
				t.Fatalf("server saw Authorization %q", sawAuth.Load())
			}
			for what, s := range map[string]string{"error": err.Error(), "logs": logs.String(), "client": fmt.Sprintf("%+v", c.Usage())} {
				if strings.Contains(s, key) || strings.Contains(s, "SECRET") {
					t.Errorf("key leaked into %s: %s", what, s)
				}
			}
			if !strings.Contains(logs.String(), "retrying") {
				t.Errorf("logs did not record the retries: %s", logs.String())
			}
		})
	}
}

func TestClientKeyFileMissing(t *testing.T) {
	_, err := NewClient(ClientOptions{BaseURL: "http://x", Model: "m", APIKeyFile: "/nonexistent/key"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/key") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestClientOptionsValidate(t *testing.T) {
	for _, o := range []ClientOptions{
		{Model: "m"}, {BaseURL: "ftp://x", Model: "m"}, {BaseURL: "http://x"},
		{BaseURL: "http://x", Model: "m", Temperature: 3},
	} {
		if _, err := NewClient(o); err == nil {
			t.Errorf("NewClient(%+v) accepted bad options", o)
		}
	}
}

func TestClientConcurrencyAndUsage(t *testing.T) {
	var inFlight, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		var req apiRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "m" || req.MaxTokens != 99 || req.Stop[0] != "\n\n" {
			http.Error(w, "bad request fields", 400)
			return
		}
		fmt.Fprint(w, okBody("ok", 10, 5))
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) { o.Concurrency = 2; o.MaxTokens = 99; o.Stop = []string{"\n\n"} })
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			stage := []string{"query", "draft"}[i%2]
			if _, err := c.Complete(context.Background(), CompletionRequest{Stage: stage, Messages: userMsg("x")}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 2 {
		t.Errorf("peak in-flight = %d, limit 2", p)
	}
	u := c.Usage()
	if u["query"].Calls != 4 || u["query"].PromptTokens != 40 || u["draft"].TotalTokens != 60 {
		t.Errorf("usage = %+v", u)
	}
}

// A key echoed near the 300-byte cut used to be truncated before redaction, leaving its first
// characters in the error.
func TestClientRedactsBeforeTruncating(t *testing.T) {
	const key = "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for _, at := range []int{0, 250, 280, 290, 299} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, strings.Repeat("x", at)+key+" tail", http.StatusBadRequest)
		}))
		c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) { o.APIKey = key })
		_, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")})
		srv.Close()
		if err == nil {
			t.Fatalf("at %d: want an error", at)
		}
		if strings.Contains(err.Error(), key[:12]) || strings.Contains(err.Error(), "ABCDEFGH") {
			t.Errorf("key at byte %d leaked a prefix into %q", at, err)
		}
	}
}

// A redirect to another origin (here: another port of the same host, which net/http's own rule
// lets through) must not carry the Bearer key; one within the origin keeps it.
func TestClientRedirectCredentials(t *testing.T) {
	const key = "sk-redirect-SECRET"
	var otherAuth, sameAuth atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherAuth.Store(r.Header.Get("Authorization"))
		fmt.Fprint(w, okBody("from other", 1, 1))
	}))
	defer other.Close()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cross/chat/completions":
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "/same/chat/completions":
			http.Redirect(w, r, srv.URL+"/final", http.StatusTemporaryRedirect)
		case "/final":
			sameAuth.Store(r.Header.Get("Authorization"))
			fmt.Fprint(w, okBody("from same", 1, 1))
		}
	}))
	defer srv.Close()
	if strings.Split(srv.URL, ":")[1] != strings.Split(other.URL, ":")[1] {
		t.Fatalf("servers on different hosts: %s %s", srv.URL, other.URL)
	}
	for _, tc := range []struct{ path, want string }{{"/cross", "from other"}, {"/same", "from same"}} {
		c, _ := newTestClient(t, srv.URL+tc.path, func(o *ClientOptions) { o.APIKey = key })
		out, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")})
		if err != nil || out.Text != tc.want {
			t.Fatalf("%s: %q, %v", tc.path, out.Text, err)
		}
	}
	if a := otherAuth.Load(); a != "" {
		t.Errorf("the other origin received Authorization %q", a)
	}
	if a := sameAuth.Load(); a != "Bearer "+key {
		t.Errorf("a same-origin redirect lost the key: %q", a)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://h:8000/x", "http://h:8000/y", true},
		{"http://h/x", "http://h:80/y", true},
		{"https://h/x", "https://H:443/y", true},
		{"http://h:8000/x", "http://h:8001/x", false},
		{"https://h/x", "http://h/x", false},
		{"http://h/x", "http://evil.h/x", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

// finish_reason "length" (the token limit) and "content_filter" (the provider's filter) mark a
// completion that was cut off, streamed or not; any other reason is a finished one.
func TestClientFinishReason(t *testing.T) {
	for _, tt := range []struct {
		reason    string
		truncated bool
	}{
		{"length", true},
		{"content_filter", true},
		{"stop", false},
		{"", false},
		{"tool_calls", false},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			var reason any = tt.reason
			if tt.reason == "" {
				reason = nil
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{
					"message": map[string]string{"role": "assistant", "content": "Reasoning: supports the first half but"}, "finish_reason": reason}}})
				w.Write(b)
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, nil)
			out, err := c.Complete(context.Background(), CompletionRequest{Messages: userMsg("x")})
			if err != nil || out.Truncated() != tt.truncated || out.FinishReason != tt.reason {
				t.Fatalf("got %+v, %v; want truncated %v", out, err, tt.truncated)
			}
			last, _ := json.Marshal(reason)
			sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hi th\"},\"finish_reason\":null}]}\n\n")
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"\"},\"finish_reason\":%s}]}\n\ndata: [DONE]\n\n", last)
			}))
			defer sse.Close()
			c, _ = newTestClient(t, sse.URL, nil)
			out, err = c.Stream(context.Background(), CompletionRequest{Messages: userMsg("x")}, func(string) {})
			if err != nil || out.Truncated() != tt.truncated || out.Text != "Hi th" {
				t.Fatalf("stream: got %+v, %v; want truncated %v", out, err, tt.truncated)
			}
		})
	}
}
