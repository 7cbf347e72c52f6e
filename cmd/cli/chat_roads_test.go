package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/server"
)

// sciFactIndex indexes the whole SciFact corpus with `kairos index`.
func sciFactIndex(t *testing.T) string {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "scifact.idx")
	if _, errOut, err := runCLI(t, "index", "--quiet", "--input", coreShared(t, "data/beir-scifact/corpus.jsonl"), "--index", idx); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	return idx
}

// TestChatRoadsByCLIAndHTTP drives `kairos chat` and `kairos serve`'s /v1/chat, with and
// without streaming, over a real SciFact index, with an LLM that lies by each road of issue 49
// in wikichat and commonsense: no lie reaches a reply or a stream event. The sentences kept and
// the sentences dropped (the turn's trace by CLI, /metrics by HTTP) are logged per road.
func TestChatRoadsByCLIAndHTTP(t *testing.T) {
	idx := sciFactIndex(t)
	for _, road := range chattest.Roads() {
		t.Run(road.Name, func(t *testing.T) {
			llm := chattest.NewServer(road.Script, 0)
			defer llm.Close()
			for _, pipeline := range []string{"wikichat", "commonsense"} {
				// By CLI: each turn a run of kairos chat, the conversation kept in --state.
				state := t.TempDir()
				var turn chat.TurnResponse
				for _, msg := range road.Turns {
					out, errOut, err := runCLI(t, "chat", "--index", idx, "--llm-url", llm.BaseURL(), "--llm-model", "fake",
						"--pipeline", pipeline, "--state", state, "--conversation", "road", "--trace", "--message", msg)
					if err != nil {
						t.Fatalf("kairos chat: %v\n%s", err, errOut)
					}
					if err := json.Unmarshal([]byte(out), &turn); err != nil {
						t.Fatalf("kairos chat --trace: %v\n%s", err, out)
					}
				}
				checkRoadReply(t, road, pipeline+" by CLI", turn.Response)
				t.Logf("%s by CLI: %d sentences kept, %d dropped", pipeline, countSentences(turn.Response), len(turn.Turn.Dropped))

				// By HTTP, streamed and not.
				s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "-1")
				for _, stream := range []bool{false, true} {
					before := s.metric("kairos_chat_dropped_sentences_total", `pipeline="`+pipeline+`"`)
					id, tok, reply := "", "", ""
					for _, msg := range road.Turns {
						extra := []string{`"pipeline": "` + pipeline + `"`}
						if stream {
							extra = append(extra, `"stream": true`)
						}
						r := s.turn(id, tok, msg, extra...)
						var done server.ChatResponse
						if stream {
							var tokens strings.Builder
							for _, ev := range serveSSE(t, r) {
								switch ev[0] {
								case "token":
									var piece map[string]string
									json.Unmarshal([]byte(ev[1]), &piece)
									checkRoadReply(t, road, pipeline+" stream event", piece["token"])
									tokens.WriteString(piece["token"])
								case "done":
									json.Unmarshal([]byte(ev[1]), &done)
								}
							}
							if tokens.String() != done.Reply {
								t.Errorf("%s: streamed %q, done %q", pipeline, tokens.String(), done.Reply)
							}
						} else {
							done = r.chat(t)
						}
						if tok == "" {
							tok = r.hdr.Get(server.SessionHeader)
						}
						id, reply = done.Conversation, done.Reply
					}
					checkRoadReply(t, road, fmt.Sprintf("%s by HTTP (stream %v)", pipeline, stream), reply)
					dropped := s.metric("kairos_chat_dropped_sentences_total", `pipeline="`+pipeline+`"`) - before
					t.Logf("%s by HTTP (stream %v): %d sentences kept, %.0f dropped", pipeline, stream, countSentences(reply), dropped)
				}
			}
		})
	}
}

// checkRoadReply fails the test when text carries a lie of the road or runs past its bound.
func checkRoadReply(t *testing.T, road chattest.Road, where, text string) {
	t.Helper()
	if leaks := chattest.Leaks(text, road.Lies); len(leaks) > 0 {
		t.Errorf("%s carries %q: %q", where, leaks, text)
	}
	if road.MaxReplyBytes > 0 && len(text) > road.MaxReplyBytes {
		t.Errorf("%s: %d bytes, over %d", where, len(text), road.MaxReplyBytes)
	}
}

// serveSSE splits a streamed chat answer into its events (name, data).
func serveSSE(t *testing.T, r reply) [][2]string {
	t.Helper()
	if r.code != 200 {
		t.Fatalf("stream: %d %s", r.code, r.body)
	}
	var out [][2]string
	for _, block := range strings.Split(string(r.body), "\n\n") {
		var ev [2]string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev[0] = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				ev[1] = v
			}
		}
		if ev[0] != "" {
			out = append(out, ev)
		}
	}
	return out
}

func countSentences(s string) int {
	n := 0
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '!' || r == '?' }) {
		if strings.TrimSpace(strings.Trim(p, " []0123456789,")) != "" {
			n++
		}
	}
	return n
}
