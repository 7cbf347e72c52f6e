package server

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// The request limits are the operator's: each has a flag, and a refusal names the limit its
// flag sets.
func TestLimitFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		body   string
		status int
		want   string
	}{
		{"k over the default", nil, `{"text":"malaria","k":301}`, 400, "over the limit of 300 (max_k)"},
		{"k within a raised --max-k", []string{"--max-k", "500"}, `{"text":"malaria","k":500}`, 200, ""},
		{"k over a raised --max-k", []string{"--max-k", "500"}, `{"text":"malaria","k":501}`, 400, "over the limit of 500 (max_k)"},
		{"a query over --max-query-chars", []string{"--max-query-chars", "5"}, `{"text":"malaria"}`, 400, "over the limit of 5 (max_query_chars)"},
		{"queries over --max-queries", []string{"--max-queries", "1"}, `{"queries":[{"text":"a"},{"text":"b"}]}`, 400, "over the limit of 1 (max_queries)"},
		{"candidates over --max-candidates", []string{"--max-candidates", "20"}, `{"text":"malaria","rerank":"cross","candidates":21}`, 400, "over the limit of 20 (max_candidates)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.Flags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			s, _ := newTestServer(t, o)
			w := do(s, "POST", "/v1/search", tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.want != "" && !strings.Contains(errorOf(t, w), tc.want) {
				t.Errorf("error %q lacks %q", errorOf(t, w), tc.want)
			}
		})
	}
}
