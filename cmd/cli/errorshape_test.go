package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Every error answer has one shape, whichever API family is called: a JSON object with
// exactly "error" and "detail", the same message in both, Content-Type application/json. A
// client that calls Kairos's /v1 and WikiChat's /search meets the same body for a bad field,
// bad JSON, a wrong method, an unknown path or an unknown passage, on real indexes of both
// lexical engines.
func TestErrorShapeOnEveryPath(t *testing.T) {
	for _, lexical := range []string{"postings", "bleve"} {
		t.Run(lexical, func(t *testing.T) {
			ts := wikiChatServer(t, lexical, nil)
			for _, tc := range []struct {
				name, method, path, body string
				status                   int
				msg                      string // in the message
			}{
				{"v1 unknown field", "POST", "/v1/search", `{"query":"x"}`, 400, `unknown field "query" (did you mean "text"?)`},
				{"wikichat unknown field", "POST", "/search", `{"query":["x"],"num_blocks":1,"top_k":3}`, 400, `unknown field "top_k"`},
				{"v1 bad value", "POST", "/v1/search", `{"text":"x","k":0}`, 400, "k: 0"},
				{"wikichat bad value", "POST", "/search", `{"query":["x"],"num_blocks":0}`, 400, `"num_blocks": 0`},
				{"v2 bad value", "POST", "/v2/search", `{"query":["x"],"num_blocks":0}`, 400, `"num_blocks": 0`},
				{"v1 bad JSON", "POST", "/v1/search", `notjson`, 400, "malformed JSON"},
				{"wikichat bad JSON", "POST", "/search", `notjson`, 400, "malformed JSON"},
				{"v1 method", "PUT", "/v1/search", "", 405, "method PUT not allowed"},
				{"wikichat method", "PUT", "/search", "", 405, "method PUT not allowed"},
				{"unknown path", "GET", "/nope", "", 404, "no such endpoint"},
				{"unknown passage", "GET", "/v1/passages/nope%230", "", 404, "nope"},
				{"no chat", "POST", "/v1/chat", `{"messages":[{"role":"user","content":"hi"}]}`, 501, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					resp, body := call(t, ts, tc.method, tc.path, tc.body)
					if resp.StatusCode != tc.status {
						t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
					}
					if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
						t.Errorf("Content-Type %q", ct)
					}
					var e struct{ Error, Detail string }
					dec := json.NewDecoder(bytes.NewReader(body))
					dec.DisallowUnknownFields()
					if err := dec.Decode(&e); err != nil || e.Error == "" || e.Detail != e.Error {
						t.Errorf("body %s (%v): want {\"error\": msg, \"detail\": msg}", body, err)
					}
					if !strings.Contains(e.Error, tc.msg) {
						t.Errorf("error %q lacks %q", e.Error, tc.msg)
					}
				})
			}
		})
	}
}
