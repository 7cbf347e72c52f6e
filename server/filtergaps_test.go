package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A source filter none of whose values the index has is refused by /v1/search, as the CLI
// refuses it, naming the field, the likeliest meant value and the index's; one value among
// others is searched past; WikiChat's API answers it with no hits, as its clients expect.
func TestSearchRefusesFilterValuesTheIndexLacks(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string // in the error
	}{
		{"a typo of the one source", "POST", "/v1/search", `{"text":"malaria","filters":{"source":"scifac"}}`, 400,
			"filters.source scifac: no passage of the index has that source (did you mean filters.source scifact?); its sources: scifact (GET /v1/stats lists them)"},
		{"a batch names its query", "POST", "/v1/search", `{"queries":[{"text":"malaria"},{"text":"fever","filters":{"source":["x","y"]}}]}`, 400,
			"queries[1].filters.source x,y: no passage of the index has that source; its sources: scifact"},
		{"the GET form", "GET", "/v1/search?" + url.Values{"q": {"malaria"}, "source": {"faq"}}.Encode(), "", 400,
			"filters.source faq: no passage"},
		{"one value of two", "POST", "/v1/search", `{"text":"malaria","filters":{"source":["scifact","other"]}}`, 200, ""},
		{"the index's source", "POST", "/v1/search", `{"text":"malaria","filters":{"source":"scifact"}}`, 200, ""},
		{"WikiChat's API", "POST", "/search", `{"query":"malaria","num_blocks":3,"search_filters":[{"field_name":"source","filter_type":"eq","field_value":"faq"}]}`, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, tc.method, tc.path, tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.status == http.StatusOK {
				return
			}
			if msg := errorOf(t, w); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nlacks %q", msg, tc.want)
			}
		})
	}
}
