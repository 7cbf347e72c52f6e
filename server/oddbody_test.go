package server

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"testing"
)

// TestEncodedBodyRefused: a compressed request body is a 415 that says so, on every path
// that reads a body; it had read as malformed JSON, which sent the client looking at its JSON.
func TestEncodedBodyRefused(t *testing.T) {
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
