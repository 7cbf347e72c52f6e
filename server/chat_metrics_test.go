package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// metricOf sums the samples of a /metrics series whose line holds every label of want.
func metricOf(t *testing.T, s *Server, name string, want ...string) float64 {
	t.Helper()
	var sum float64
	for _, line := range strings.Split(do(s, "GET", "/metrics", "").Body.String(), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			var v float64
			if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err != nil {
				t.Fatalf("metric line %q", line)
			}
			sum += v
		}
	}
	return sum
}

// droppingChatter answers every turn as a wikichat turn whose attribution check dropped two
// draft sentences and one of the refinement.
type droppingChatter struct{}

func (droppingChatter) Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error) {
	return ChatResponse{Conversation: "c", Reply: "ok", Citations: []ChatCitation{}, Grounded: true, Pipeline: "wikichat",
		Dropped: map[string]int{"draft": 2, "refine": 1}}, nil
}

// /metrics counts the sentences the attribution check dropped, by pipeline and stage.
func TestChatMetricsDroppedSentences(t *testing.T) {
	s, _ := newTestServer(t, Options{Chat: droppingChatter{}})
	for range 2 {
		if w := do(s, "POST", "/v1/chat", `{"message":"hi"}`); w.Code != 200 {
			t.Fatal(w.Code)
		}
	}
	for stage, want := range map[string]float64{"draft": 4, "refine": 2} {
		if got := metricOf(t, s, "kairos_chat_dropped_sentences_total", `pipeline="wikichat"`, `stage="`+stage+`"`); got != want {
			t.Errorf("dropped %s: %v, want %v", stage, got, want)
		}
	}
	if strings.Contains(do(s, "POST", "/v1/chat", `{"message":"hi"}`).Body.String(), "dropped") {
		t.Error("the counts reached the response")
	}
}

// blockingChatter holds every turn until release is closed.
type blockingChatter struct {
	started chan struct{}
	release chan struct{}
}

func (c blockingChatter) Chat(ctx context.Context, req ChatRequest, stream *ChatStream) (ChatResponse, error) {
	c.started <- struct{}{}
	<-c.release
	return ChatResponse{Conversation: "c", Reply: "ok", Citations: []ChatCitation{}}, nil
}

// Past --chat-max-in-flight turns running, a turn is refused with a 503 and Retry-After, and
// counted.
func TestChatMaxInFlight(t *testing.T) {
	c := blockingChatter{started: make(chan struct{}, 4), release: make(chan struct{})}
	s, _ := newTestServer(t, Options{Chat: c, ChatMaxInFlight: 1})
	var wg sync.WaitGroup
	wg.Go(func() {
		if w := do(s, "POST", "/v1/chat", `{"message":"first"}`); w.Code != 200 {
			t.Errorf("the running turn: %d", w.Code)
		}
	})
	<-c.started
	// The second turn is answered at once; were it let through, it would wait for release,
	// which comes after a few seconds.
	second := make(chan *httptest.ResponseRecorder, 1)
	go func() { second <- do(s, "POST", "/v1/chat", `{"message":"second"}`) }()
	var w *httptest.ResponseRecorder
	select {
	case w = <-second:
	case <-time.After(5 * time.Second):
		close(c.release)
		w = <-second
		t.Error("a second turn ran past --chat-max-in-flight 1")
		c.release = nil
	}
	if c.release != nil {
		close(c.release)
	}
	wg.Wait()
	if w.Code != 503 || w.Header().Get("Retry-After") != "1" || !strings.Contains(errorOf(t, w), "--chat-max-in-flight") {
		t.Errorf("a second turn: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if n := metricOf(t, s, "kairos_chat_refusals_total", `reason="busy"`); n != 1 {
		t.Errorf("busy refusals %v", n)
	}
	if w := do(s, "POST", "/v1/chat", `{"message":"third"}`); w.Code != 200 {
		t.Errorf("after the first ended: %d", w.Code)
	}
}
