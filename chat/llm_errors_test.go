package chat

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every way an LLM call fails has one kind (errors.Is), one outcome, and reaches the
// observer in the call's context; the detail (status, body) stays wrapped for logs.
func TestClientErrorKinds(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		url     string // instead of the handler's server
		kind    error
		outcome string
		retry   time.Duration
	}{
		{"5xx", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom at 10.0.0.7:9000", 500) }, "", ErrLLMUpstream, OutcomeUpstream, 0},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, "", ErrLLMRateLimited, OutcomeRateLimited, 7 * time.Second},
		{"401", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad key", http.StatusUnauthorized) }, "", ErrLLMRejected, OutcomeRejected, 0},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>gateway</html>")) }, "", ErrLLMBadResponse, OutcomeBadResponse, 0},
		{"no choices", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"choices":[]}`)) }, "", ErrLLMBadResponse, OutcomeBadResponse, 0},
		{"hangs", func(w http.ResponseWriter, r *http.Request) { hang(r) }, "", ErrLLMTimeout, OutcomeTimeout, 0},
		{"not listening", nil, closedURL, ErrLLMUnreachable, OutcomeUnreachable, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.url
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				defer srv.Close()
				u = srv.URL
			}
			c, _ := newTestClient(t, u, func(o *ClientOptions) { o.MaxRetries, o.Timeout = -1, 200*time.Millisecond })
			var mu sync.Mutex
			var seen []CallRecord
			ctx := WithCallObserver(context.Background(), func(r CallRecord) { mu.Lock(); seen = append(seen, r); mu.Unlock() })
			for _, call := range []func() error{
				func() error {
					_, err := c.Complete(ctx, CompletionRequest{Stage: "draft", Messages: userMsg("hi")})
					return err
				},
				func() error {
					_, err := c.Stream(ctx, CompletionRequest{Stage: "draft", Messages: userMsg("hi")}, func(string) {})
					return err
				},
			} {
				err := call()
				if !errors.Is(err, tt.kind) || Outcome(err) != tt.outcome || LLMRetryAfter(err) != tt.retry {
					t.Errorf("err %v: kind %v? outcome %s, retry %s", err, errors.Is(err, tt.kind), Outcome(err), LLMRetryAfter(err))
				}
				for _, other := range []error{ErrLLMUpstream, ErrLLMRateLimited, ErrLLMRejected, ErrLLMBadResponse, ErrLLMTimeout, ErrLLMUnreachable} {
					if other != tt.kind && errors.Is(err, other) {
						t.Errorf("%v is also %v", err, other)
					}
				}
			}
			if len(seen) != 2 {
				t.Fatalf("observed %+v, want the two calls", seen)
			}
			for _, r := range seen {
				if r.Stage != "draft" || r.Outcome != tt.outcome || r.Model != "m" || r.Attempts != 1 {
					t.Errorf("observed %+v", r)
				}
			}
		})
	}
}

// A call that succeeds is observed as ok, with its attempts; a caller that gives up is not
// the LLM's failure.
func TestClientObserverOutcomes(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n++; n == 1 {
			http.Error(w, "again", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(okBody("fine", 3, 1)))
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, nil)
	var got []CallRecord
	ctx := WithCallObserver(context.Background(), func(r CallRecord) { got = append(got, r) })
	if _, err := c.Complete(ctx, CompletionRequest{Stage: "query", Messages: userMsg("hi")}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := c.Complete(cctx, CompletionRequest{Stage: "verify", Messages: userMsg("hi")})
	if !errors.Is(err, context.Canceled) || Outcome(err) != OutcomeCanceled {
		t.Errorf("cancelled call: %v (%s)", err, Outcome(err))
	}
	if len(got) != 2 || got[0].Outcome != OutcomeOK || got[0].Attempts != 2 || got[1].Outcome != OutcomeCanceled {
		t.Errorf("observed %+v", got)
	}
}

// The transport's error names the address; the kind does not, so a server can answer with
// the kind alone.
func TestClientUnreachableKeepsTheAddressInTheDetailOnly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, _ := newTestClient(t, "http://"+addr, func(o *ClientOptions) { o.MaxRetries = -1 })
	_, err = c.Complete(context.Background(), CompletionRequest{Messages: userMsg("hi")})
	if !errors.Is(err, ErrLLMUnreachable) || !strings.Contains(err.Error(), addr) || strings.Contains(ErrLLMUnreachable.Error(), "127.0.0.1") {
		t.Errorf("%v", err)
	}
}
