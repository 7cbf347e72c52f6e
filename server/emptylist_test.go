package server

import (
	"net/http"
	"testing"
)

// TestEmptyListFilterRefused: "source": "" on /v1 is refused, as "source": [""] is, where it
// had meant no filter at all (request.List had read "" as no list); so are language and
// block_type, which read alike.
func TestEmptyListFilterRefused(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct{ name, body, msg string }{
		{"source", `{"text":"malaria","filters":{"source":""}}`, "filters.source[0]: empty string"},
		{"source blank", `{"text":"malaria","filters":{"source":"  "}}`, "filters.source[0]: empty string"},
		{"source in list", `{"text":"malaria","filters":{"source":[""]}}`, "filters.source[0]: empty string"},
		{"language", `{"text":"malaria","filters":{"language":""}}`, "filters.language[0]: empty string"},
		{"block_type", `{"text":"malaria","filters":{"block_type":""}}`, `filters.block_type[0]: "" is not a block type (want text, table, infobox)`},
		{"in a batch", `{"queries":[{"text":"a"},{"text":"malaria","filters":{"source":""}}]}`, "queries[1].filters.source[0]: empty string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, "POST", "/v1/search", tc.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			wantError(t, w.Body.Bytes(), tc.msg)
		})
	}
	if w := do(s, "POST", "/v1/search", `{"text":"malaria","filters":{"source":null}}`); w.Code != http.StatusOK {
		t.Errorf("source null: status %d: %s", w.Code, w.Body)
	}
}
