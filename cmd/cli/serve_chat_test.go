package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/server"
)

// POST /v1/chat on kairos serve: a wikichat turn over a real index of Wikipedia leads, with a
// scripted LLM, as JSON and as server-sent events.
func TestServeChat(t *testing.T) {
	leads, err := chattest.LoadLeads(coreShared(t, "data/wikichat-topics/recent_articles_en.json"), 120)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "leads.jsonl")
	f, _ := os.Create(src)
	enc := json.NewEncoder(f)
	for _, p := range leads {
		enc.Encode(map[string]string{"_id": p.DocID, "title": p.Title, "text": strings.TrimPrefix(p.Text, p.Title+" | "),
			"url": "https://en.wikipedia.org/wiki/" + strings.ReplaceAll(p.Title, " ", "_")})
	}
	f.Close()
	idx := filepath.Join(dir, "idx")
	buildIndex(t, idx, indexer.Options{Inputs: []indexer.InputSpec{{Path: src}}})
	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()

	log := slog.New(slog.DiscardHandler)
	ix := newLiveIndex(indexer.Location{Dir: idx}, "", retrievalOptions{Logger: log})
	opts := server.Options{Logger: log, Index: ix, ChatTrace: true}
	co := chatOpts(llm.BaseURL())
	co.Store.Path = filepath.Join(dir, "chat.db")
	co.StorePath = co.Store.Path
	var store interface{ Close() error }
	if opts.Chat, store, err = newServeChat(context.Background(), co, chat.RetrieverFunc(ix.Search), ix, nil, log); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", 5*time.Second, opts, nil, func(a net.Addr) { addrc <- a })
	}()
	base := "http://" + (<-addrc).String()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	session := ""
	post := func(body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", base+"/v1/chat", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set(server.SessionHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	resp, body := post(`{"message": "Who directed Frozen?"}`)
	var cr server.ChatResponse
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &cr) != nil {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	if cr.Reply != "Frozen was directed by Chris Buck and Jennifer Lee [1]." || cr.Conversation == "" || len(cr.Citations) == 0 {
		t.Fatalf("chat response %+v", cr)
	}
	if session = resp.Header.Get(server.SessionHeader); session == "" || session != cr.SessionToken {
		t.Fatalf("session token: header %q, body %q", session, cr.SessionToken)
	}
	// The reply's [1] is bound to the Frozen lead, with the URL the index keeps.
	if c := cr.Citations[0]; c.N != 1 || c.Title != "Frozen (2013 film)" || c.URL != "https://en.wikipedia.org/wiki/Frozen_(2013_film)" ||
		len(c.Facts) != 1 || !strings.Contains(c.Facts[0], "Chris Buck") {
		t.Errorf("citation [1] = %+v", c)
	}
	cited := map[string]bool{}
	for _, c := range cr.Citations {
		if cited[c.PassageID] {
			t.Errorf("citation %s repeated in %+v", c.PassageID, cr.Citations)
		}
		cited[c.PassageID] = true
	}
	for _, st := range []string{"query", "retrieve", "verify", "refine"} {
		if _, ok := cr.Stages[st]; !ok {
			t.Errorf("stage %s missing from %v", st, cr.Stages)
		}
	}

	resp, body = post(`{"message": "Who directed Frozen?", "conversation_id": "` + cr.Conversation + `", "stream": true}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	var tokens strings.Builder
	var doneEvent server.ChatResponse
	sc := bufio.NewScanner(strings.NewReader(body))
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		} else if d, ok := strings.CutPrefix(line, "data: "); ok {
			switch event {
			case "token":
				var tok map[string]string
				json.Unmarshal([]byte(d), &tok)
				tokens.WriteString(tok["token"])
			case "done":
				json.Unmarshal([]byte(d), &doneEvent)
			default:
				t.Errorf("unexpected %s event %s", event, d)
			}
		}
	}
	if tokens.String() != doneEvent.Reply || doneEvent.Reply != cr.Reply || doneEvent.Conversation != cr.Conversation {
		t.Fatalf("stream: tokens %q, done %+v", tokens.String(), doneEvent)
	}

	resp, body = post(`{"message": "Who directed Frozen?", "time": "recent"}`)
	if resp.StatusCode != 400 || !strings.Contains(body, "leave time empty") {
		t.Fatalf("time on chat: %d %s", resp.StatusCode, body)
	}
}

// serve takes the LLM flags kairos chat takes, into the same options, and the chat it serves
// uses them: here, the prices of its cost estimate and the passages per query.
func TestServeChatLLMFlags(t *testing.T) {
	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var o chatCLIOptions
	registerServeChat(fs, &o)
	err := fs.Parse([]string{"--llm-url", llm.BaseURL(), "--llm-model", "m", "--llm-retries", "0", "--max-tokens", "64",
		"--llm-timeout", "7s", "--llm-price-prompt", "2", "--llm-price-completion", "8", "--passages", "1", "--chat-store", ""})
	if err != nil {
		t.Fatal(err)
	}
	if c := o.Client; c.MaxRetries != -1 || c.MaxTokens != 64 || c.Timeout != 7*time.Second || c.PricePrompt != 2 || c.PriceCompletion != 8 || o.WikiChat.PassagesPerQuery != 1 {
		t.Fatalf("options %+v, wikichat %+v", c, o.WikiChat)
	}
	leads, err := chattest.LoadLeads(coreShared(t, "data/wikichat-topics/recent_articles_en.json"), 120)
	if err != nil {
		t.Fatal(err)
	}
	ret := chattest.NewRetriever(leads)
	chatter, store, err := newServeChat(context.Background(), o, ret, ret, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	resp, err := chatter.Chat(context.Background(), server.ChatRequest{Message: "Who directed Frozen?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	// The cost is summed call by call, so it equals the priced totals only to rounding.
	if u == nil || math.Abs(u.Cost-(float64(u.PromptTokens)*2+float64(u.CompletionTokens)*8)/1000) > 1e-9 || u.Cost == 0 {
		t.Errorf("usage %+v", u)
	}
	planned := false
	for _, q := range ret.Queries() {
		if q.Text == "Frozen 2013 film Chris Buck Jennifer Lee" { // cliScript's query stage
			planned = true
			if q.K != 1 {
				t.Errorf("the planned query asked for %d passages, not --passages 1", q.K)
			}
		}
	}
	if !planned {
		t.Errorf("no planned query in %+v", ret.Queries())
	}
}

// TestServeChatSaysWhereConversationsAre: serve's chat says once, at start, where it keeps
// conversations (a file it creates beside the index unless --chat-store says otherwise, or
// memory), and a server without a sentence encoder says how mpc recalls its memory as
// information, not as a warning: nothing is wrong with a BM25-only server's chat.
func TestServeChatSaysWhereConversationsAre(t *testing.T) {
	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()
	leads, err := chattest.LoadLeads(coreShared(t, "data/wikichat-topics/recent_articles_en.json"), 20)
	if err != nil {
		t.Fatal(err)
	}
	ret := chattest.NewRetriever(leads)
	tests := []struct {
		name string
		file bool
		want string // the store's line; FILE stands for the store's file
	}{
		{"file", true, `level=INFO msg="chat conversations are kept in a file (--chat-store)" file=FILE`},
		{"memory", false, `level=INFO msg="chat conversations are kept in memory only (--chat-store \"\")"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			o := chatOpts(llm.BaseURL())
			file := filepath.Join(t.TempDir(), "kairos-chat.db")
			if tc.file {
				o.StorePath = file
			}
			tc.want = strings.ReplaceAll(tc.want, "FILE", file)
			_, store, err := newServeChat(t.Context(), o, ret, ret, nil, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			store.Close()
			out := logs.String()
			if strings.Count(out, "chat conversations are kept") != 1 || !strings.Contains(out, tc.want) {
				t.Errorf("log:\n%s\nwant once: %s", out, tc.want)
			}
			if strings.Contains(out, "level=WARN") {
				t.Errorf("a warning for a server that is well:\n%s", out)
			}
			if !strings.Contains(out, `level=INFO msg="chat: mpc recalls its memory with the hashed bag-of-words encoder`) {
				t.Errorf("no word of how mpc recalls without an encoder:\n%s", out)
			}
			if _, err := os.Stat(file); (err == nil) != tc.file {
				t.Errorf("store file %s: %v", file, err)
			}
		})
	}
}
