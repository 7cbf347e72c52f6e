package server

import (
	"strings"
	"testing"
)

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
		_, err := decodeSearchRequest([]byte(tc.body), l)
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
