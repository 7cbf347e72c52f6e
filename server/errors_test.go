package server

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

// The tests of errors.go: how a request body is read and decoded, and how an error becomes a
// status and a message.

// TestCompressedBodyRefused: a compressed request body is a 415 that says so, on every path
// that reads a body; it had read as malformed JSON, which sent the client looking at its JSON.
func TestCompressedBodyRefused(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"text":"malaria"}`))
	zw.Close()
	tests := []struct{ name, path, encoding, body string }{
		{"v1 gzip", "/v1/search", "gzip", gz.String()},
		{"wikichat gzip", "/search", "gzip", gz.String()},
		{"wikichat 2.0 br", "/v2/search", "br", `{"query":"a","num_blocks":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, "POST", tc.path, tc.body, "Content-Encoding", tc.encoding)
			if w.Code != http.StatusUnsupportedMediaType {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			wantError(t, w.Body.Bytes(), "Content-Encoding "+tc.encoding+" is not supported: send the request body uncompressed")
		})
	}
	if w := do(s, "POST", "/v1/search", `{"text":"malaria"}`, "Content-Encoding", "identity"); w.Code != http.StatusOK {
		t.Errorf("identity: status %d: %s", w.Code, w.Body)
	}
}

// TestTypeErrorNamesAPIField: a value of the wrong JSON type is refused naming the field as
// the API spells it, never a Go struct's name: WikiChat 2.0's request embeds 2.1's, and
// encoding/json had put "WikiChatRequest." before every field it shares.
func TestTypeErrorNamesAPIField(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct{ name, path, body, msg string }{
		{"v2 num_blocks", "/v2/search", `{"query":"a","num_blocks":"3"}`, `field "num_blocks": want an integer, got JSON string`},
		{"v2 rerank", "/v2/search", `{"query":"a","num_blocks":3,"rerank":"yes"}`, `field "rerank": want a boolean, got JSON string`},
		{"v2 num_blocks_to_rerank", "/v2/search", `{"query":"a","num_blocks":3,"num_blocks_to_rerank":1.5}`, `field "num_blocks_to_rerank": want an integer, got JSON number 1.5`},
		{"v2 search_filters", "/v2/search", `{"query":"a","num_blocks":3,"search_filters":{}}`, `field "search_filters": want an array, got JSON object`},
		{"v2 filter field", "/v2/search", `{"query":"a","num_blocks":3,"search_filters":[{"field_name":3,"filter_type":"eq","field_value":"x"}]}`,
			`field "search_filters.field_name": want a string, got JSON number`},
		{"2.1 filter field", "/search", `{"query":"a","num_blocks":3,"search_filters":[{"field_name":"source","filter_type":true,"field_value":"x"}]}`,
			`field "search_filters.filter_type": want a string, got JSON bool`},
		{"v1 shorthand", "/v1/search", `{"text":"a","k":"3"}`, `field "k": want an integer, got JSON string`},
		{"v1 shorthand filter", "/v1/search", `{"text":"a","filters":{"date_from":3}}`, `field "filters.date_from": want a string, got JSON number`},
		{"v1 batch", "/v1/search", `{"queries":[{"text":"a","explain":"yes"}]}`, `field "queries.explain": want a boolean, got JSON string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { postWantError(t, s, tc.path, tc.body, http.StatusBadRequest, tc.msg) })
	}
}

// TestUnknownFieldSuggests: a wrong field names the right one, on the single query, in a
// batch line and on the chat body, through the one decoder every path uses.
func TestUnknownFieldSuggests(t *testing.T) {
	l := Options{MaxQueries: 10}.limits()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"single query", `{"query": "pets"}`, `unknown field "query" (did you mean "text"?)`},
		{"batch line", `{"queries": [{"text": "a"}, {"query": "pets"}]}`, `queries[1]: unknown field "query" (did you mean "text"?)`},
		{"typo", `{"text": "a", "per_dco": 1}`, `unknown field "per_dco" (did you mean "per_doc"?)`},
		{"top_k", `{"text": "a", "top_k": 3}`, `unknown field "top_k" (did you mean "k"?)`},
		{"nested filter", `{"text": "a", "filters": {"sources": "x"}}`, `filters: unknown field "sources" (did you mean "source"?)`},
		{"threshold", `{"text": "a", "threshold": 2}`, `unknown field "threshold" (did you mean "min_score"?)`},
		{"nothing close", `{"text": "a", "zzzzzz": 1}`, `unknown field "zzzzzz"`},
	} {
		_, _, err := decodeSearchRequest([]byte(tc.body), l)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if tc.name == "nothing close" && err != nil && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v suggests a field", tc.name, err)
		}
	}
	var chat ChatRequest
	if err := decodeStrict([]byte(`{"mesages": []}`), &chat); err == nil || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("chat: %v, want a suggestion", err)
	}
}

// A turn cut by the LLM client's timeout is reported with that timeout, not the chat timeout.
func TestClassifyLLMTimeout(t *testing.T) {
	err := fmt.Errorf("conversation c turn 0 (sicl): stage sicl: llm sicl: attempt 1: stream broken after partial output: %w",
		&chat.TimeoutError{Timeout: time.Minute, Err: fmt.Errorf("reading stream: deadline exceeded")})
	status, msg := classify(err, (2 * time.Minute).String())
	if status != http.StatusGatewayTimeout || !strings.Contains(msg, "1m0s") || strings.Contains(msg, "2m0s") {
		t.Errorf("classify = %d %q, want 504 naming the LLM timeout 1m0s", status, msg)
	}
}

// TestClassifyLiveErrors: what the live index refuses is mapped to a status here, in
// classifyRetry alone, by the type of the error, whatever wraps it; the server's own failure
// is a 500 without its words.
func TestClassifyLiveErrors(t *testing.T) {
	wrap := func(err error) error { return &queryError{index: 2, err: fmt.Errorf("search: %w", err)} }
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"mode", &live.UnsupportedError{Err: live.ErrUnsupportedMode, What: "mode dense", Fix: "--model"}, http.StatusBadRequest},
		{"stage", &live.UnsupportedError{Err: live.ErrUnsupportedStage, What: "rerank stage cross", Fix: "--cross-model"}, http.StatusBadRequest},
		{"invalid query", &live.InvalidQueryError{Err: errors.New("range is reversed")}, http.StatusBadRequest},
		{"not loaded", live.ErrNotLoaded, http.StatusServiceUnavailable},
		{"unknown passage", fmt.Errorf("passage %q: %w", "x#0", search.ErrNotFound), http.StatusNotFound},
		{"anything else", errors.New("disk on fire"), http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, err := range []error{tc.err, wrap(tc.err)} {
				// The server's own failure keeps its words for the log (noteFailure).
				words := tc.status != http.StatusInternalServerError
				if status, msg := classify(err, "10s"); status != tc.status || strings.Contains(msg, tc.err.Error()) != words {
					t.Errorf("classify(%v) = %d %q, want %d, the error's words in it %v", err, status, msg, tc.status, words)
				}
			}
		})
	}
}
