package chat

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Usage is the server's when it reports one, else estimated from the text and marked so, for
// whole and streamed answers alike; the cost prices prompt and completion tokens per 1,000.
func TestClientUsageAndCost(t *testing.T) {
	prompt := strings.Repeat("word ", 80) // 400 bytes: 100 estimated tokens, + 3 + 4 of framing
	const answer = "twelve bytes"         // 3 estimated tokens
	noUsageSSE := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n", answer)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		stream  bool
		want    Usage
	}{
		{"reported", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, okBody(answer, 1000, 200)) }, false,
			Usage{PromptTokens: 1000, CompletionTokens: 200, TotalTokens: 1200, Calls: 1, Cost: 1000*0.5/1000 + 200*2.0/1000}},
		{"not reported", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, answer)
		}, false, Usage{PromptTokens: 107, CompletionTokens: 3, TotalTokens: 110, Calls: 1, EstimatedCalls: 1, Cost: 107*0.5/1000 + 3*2.0/1000}},
		{"streamed, reported", sseHandler([]string{"twelve ", "bytes"}, true), true,
			Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10, Calls: 1, Cost: 7*0.5/1000 + 3*2.0/1000}},
		{"streamed, not reported", noUsageSSE, true,
			Usage{PromptTokens: 107, CompletionTokens: 3, TotalTokens: 110, Calls: 1, EstimatedCalls: 1, Cost: 107*0.5/1000 + 3*2.0/1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, func(o *ClientOptions) { o.PricePrompt, o.PriceCompletion = 0.5, 2.0 })
			req := CompletionRequest{Stage: "draft", Messages: userMsg(prompt)}
			var out Completion
			var err error
			if tt.stream {
				out, err = c.Stream(context.Background(), req, func(string) {})
			} else {
				out, err = c.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := out.Usage
			if math.Abs(got.Cost-tt.want.Cost) > 1e-12 {
				t.Errorf("cost %v, want %v", got.Cost, tt.want.Cost)
			}
			got.Cost, tt.want.Cost = 0, 0
			if got != tt.want {
				t.Errorf("usage %+v, want %+v", got, tt.want)
			}
			if m := c.Usage()["draft"]; m.TotalTokens != out.Usage.TotalTokens || m.EstimatedCalls != out.Usage.EstimatedCalls {
				t.Errorf("client meter %+v, call %+v", m, out.Usage)
			}
		})
	}
	if _, err := NewClient(ClientOptions{BaseURL: "http://x/v1", Model: "m", PricePrompt: -1}); err == nil {
		t.Error("a negative price was accepted")
	}
}
