package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
)

// A turn cut by the LLM client's timeout is reported with that timeout, not the chat timeout.
func TestClassifyLLMTimeout(t *testing.T) {
	err := fmt.Errorf("conversation c turn 0 (sicl): stage sicl: llm sicl: attempt 1: stream broken after partial output: %w",
		&chat.TimeoutError{Timeout: time.Minute, Err: fmt.Errorf("reading stream: deadline exceeded")})
	status, msg := classify(err, (2 * time.Minute).String())
	if status != http.StatusGatewayTimeout || !strings.Contains(msg, "1m0s") || strings.Contains(msg, "2m0s") {
		t.Errorf("classify = %d %q, want 504 naming the LLM timeout 1m0s", status, msg)
	}
}
