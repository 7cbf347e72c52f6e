package server

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/corpus"
)

// unsafeURLs are links a corpus may carry that must never reach a client's page.
var unsafeURLs = []string{"javascript:alert(1)", " JavaScript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>",
	"file:///etc/passwd", "vbscript:msgbox(1)", "//evil.example/x", "/wiki/Relative", "java\tscript:alert(1)"}

// An index built before ingest checked its URLs (here, passages served as they are) still
// sends only http(s) URLs: in /v1/search hits, /v1/passages, WikiChat's blocks (null) and the
// citations of /v1/chat. The http(s) URLs of the same passages are sent as they are.
func TestResponsesCarryOnlyWebURLs(t *testing.T) {
	ps := sciFactPassages(t, 300)
	for i := range ps {
		if i%2 == 0 {
			ps[i].URL = unsafeURLs[(i/2)%len(unsafeURLs)]
		} else {
			ps[i].URL = "https://scifact.example/doc/" + ps[i].DocID
		}
	}
	s := webURLServer(t, ps)

	seen := 0 // URLs checked
	check := func(where, u string, want string) {
		t.Helper()
		seen++
		if u != want {
			t.Errorf("%s: url %q, want %q", where, u, want)
		}
	}
	wantOf := func(id string) string {
		for _, p := range ps {
			if p.ID == id {
				if strings.HasPrefix(p.URL, "https://") {
					return p.URL
				}
				return ""
			}
		}
		t.Fatalf("no passage %s", id)
		return ""
	}
	for _, q := range []string{"vitamin D", newbornQuery, "cancer cells", "protein expression"} {
		w := do(s, "POST", "/v1/search", `{"text": "`+q+`", "k": 20}`)
		var sr SearchResponse
		mustJSON(t, w.Body.Bytes(), &sr)
		for _, h := range sr.Results[0].Hits {
			check("search "+h.PassageID, h.URL, wantOf(h.PassageID))
			w := do(s, "GET", "/v1/passages/"+url.PathEscape(h.PassageID), "")
			var p PassageResponse
			mustJSON(t, w.Body.Bytes(), &p)
			check("passage "+h.PassageID, p.URL, wantOf(h.PassageID))
		}
		w = do(s, "POST", "/search", `{"query": "`+q+`", "num_blocks": 20}`)
		var wr []WikiChatQueryResult
		mustJSON(t, w.Body.Bytes(), &wr)
		for _, b := range wr[0].Results {
			id := b.BlockMetadata["passage_id"].(string)
			got := ""
			if b.URL != nil {
				got = *b.URL
				if got == "" {
					t.Errorf("WikiChat block %s: url \"\", want null", id)
				}
			}
			check("wikichat "+id, got, wantOf(id))
		}
	}
	w := do(s, "POST", "/v1/chat", `{"message": "What does vitamin D do to bones?"}`)
	var cr ChatResponse
	mustJSON(t, w.Body.Bytes(), &cr)
	if w.Code != 200 || len(cr.Citations) == 0 || !strings.Contains(cr.Reply, "[1]") {
		t.Fatalf("chat: %d %s", w.Code, w.Body)
	}
	for _, c := range cr.Citations {
		check("chat citation "+c.PassageID, c.URL, wantOf(c.PassageID))
	}
	for _, bad := range []string{"javascript:", "data:", "file:", "vbscript:", "//evil", "/wiki/Relative"} {
		if strings.Contains(strings.ToLower(w.Body.String()), strings.ToLower(`"`+bad)) {
			t.Errorf("the chat response carries %q: %s", bad, w.Body)
		}
	}
	if seen < 100 {
		t.Errorf("only %d URLs checked", seen)
	}
}

// webURLServer serves ps through the fake engine, with chat on a scripted WikiChat whose
// retriever holds the same passages.
func webURLServer(t *testing.T, ps []corpus.Passage) *Server {
	t.Helper()
	llm := chattest.NewServer(copyingScript, 0)
	t.Cleanup(llm.Close)
	client, err := chat.NewClient(chat.ClientOptions{BaseURL: llm.BaseURL(), Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := chat.LoadTemplates("")
	wc, err := chat.NewWikiChat(chat.Deps{LLM: client, Templates: tpl, Retriever: chattest.NewRetriever(ps)}, chat.WikiChatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := chat.NewService(chat.ServiceOptions{Pipelines: []chat.Pipeline{wc}, ServerIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	eng := newFakeEngine(ps)
	s, err := New(Options{Chat: NewChatService(svc, nil), Index: engineIndex(eng)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A stage output's "url" fields are checked too: a stage may put passages in its output.
func TestWebURLsOnlyInStageOutputs(t *testing.T) {
	in := json.RawMessage(`{"hits":[{"url":"javascript:alert(1)","n":1.50},{"url":"https://a.example/x"}],"note":"url"}`)
	got := string(webURLsOnly(in))
	if got != `{"hits":[{"n":1.50,"url":""},{"url":"https://a.example/x"}],"note":"url"}` {
		t.Errorf("%s", got)
	}
	if plain := json.RawMessage(`{"query":"x"}`); string(webURLsOnly(plain)) != string(plain) {
		t.Error("an output without urls was rewritten")
	}
}

// copyingScript is a WikiChat LLM that searches the user's words and summarizes each passage
// by its first sentence, copied; the draft states the first fact with its marker, and the
// refinement keeps the draft: every sentence it writes is a passage's own.
func copyingScript(stage string, msgs []chat.Message) string {
	p := chattest.LastUser(msgs)
	switch stage {
	case chat.StageQuery:
		return "Search: yes\nQuery: " + chattest.Field(p, "User") + "\nTime: none"
	case chat.StageSummarize:
		_, text, ok := strings.Cut(p, "<<<UNTRUSTED passage")
		if !ok {
			return "None"
		}
		_, text, _ = strings.Cut(text, "\n")
		if _, body, ok := strings.Cut(text, " | "); ok {
			text = body
		}
		first, _, _ := strings.Cut(text, ". ")
		return "- " + strings.TrimSuffix(first, ".") + "."
	case chat.StageGenerate:
		return "I do not know."
	case chat.StageClaims:
		return "None"
	case chat.StageDraft:
		_, facts, _ := strings.Cut(p, "Verified facts:\n- ")
		fact, _, _ := strings.Cut(strings.TrimSpace(facts), "\n")
		if body, n, ok := strings.Cut(fact, ". ["); ok {
			return body + " [" + n + "."
		}
		return fact
	case chat.StageRefine:
		return "Revised response: " + chattest.Field(p, "Reply")
	}
	return "None"
}
