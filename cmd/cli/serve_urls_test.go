package cli

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/server"
)

// badLinks are links a corpus may carry that are not http(s): kairos index removes them, and
// says how many.
var badLinks = []string{"javascript:alert(1)", " JavaScript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>",
	"file:///etc/passwd", "vbscript:msgbox(1)", "//evil.example/x", "/wiki/Relative", "java\tscript:alert(1)"}

// Only http(s) URLs leave the server. kairos index removes a passage url of any other kind
// (and counts them in its summary); /v1/search, /v1/passages, WikiChat's /search (null) and
// /v1/chat's citations then carry the http(s) links as they were and no other. The Frozen
// lead, which the chat cites, is one whose link was javascript:.
func TestServeURLsOnlyHTTP(t *testing.T) {
	links := map[string]string{} // title -> the link it was indexed with
	n := 0
	idx, summary := leadsIndex(t, func(title string) string {
		l := wikiLink(title)
		if title == "Frozen (2013 film)" {
			l = "javascript:alert(1)"
		} else if n%3 == 0 {
			l = badLinks[(n/3)%len(badLinks)]
		}
		n++
		links[title] = l
		return l
	})
	bad := 0
	for _, l := range links {
		if !strings.HasPrefix(l, "https://") {
			bad++
		}
	}
	if want := "urls        " + strconv.Itoa(bad) + " removed: not http(s)"; bad < 40 || !strings.Contains(summary, want) {
		t.Fatalf("kairos index summary lacks %q (%d bad links):\n%s", want, bad, summary)
	}
	want := func(title string) string {
		if l := links[title]; strings.HasPrefix(l, "https://") {
			return l
		}
		return ""
	}
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "-1")
	checked, badSeen := 0, 0
	check := func(where, title, got string) {
		t.Helper()
		checked++
		if want(title) == "" {
			badSeen++
		}
		if got != want(title) {
			t.Errorf("%s %q: url %q, want %q", where, title, got, want(title))
		}
	}
	for _, q := range []string{"film", "album released", "election president", "football season", "Frozen directed"} {
		var sr server.SearchResponse
		if r := s.do("POST", "/v1/search", `{"text": "`+q+`", "k": 30}`); r.code != 200 || json.Unmarshal(r.body, &sr) != nil {
			t.Fatalf("search %q: %d %s", q, r.code, r.body)
		}
		for _, h := range sr.Results[0].Hits {
			check("/v1/search", h.Title, h.URL)
			var p server.PassageResponse
			json.Unmarshal(s.do("GET", "/v1/passages/"+url.PathEscape(h.PassageID), "").body, &p)
			check("/v1/passages", h.Title, p.URL)
		}
		var wr []struct {
			Results []struct {
				Title string  `json:"document_title"`
				URL   *string `json:"url"`
			} `json:"results"`
		}
		json.Unmarshal(s.do("POST", "/search", `{"query": "`+q+`", "num_blocks": 30}`).body, &wr)
		for _, b := range wr[0].Results {
			got := ""
			if b.URL != nil {
				got = *b.URL
			}
			check("/search", b.Title, got)
		}
	}
	for _, stream := range []bool{false, true} {
		extra := `"stream": false`
		if stream {
			extra = `"stream": true`
		}
		r := s.turn("", "", "Who directed Frozen?", extra)
		body := string(r.body)
		if stream {
			body = body[strings.LastIndex(body, "data: ")+len("data: "):]
		}
		var cr server.ChatResponse
		if r.code != 200 || json.Unmarshal([]byte(body), &cr) != nil || len(cr.Citations) == 0 {
			t.Fatalf("chat (stream %v): %d %s", stream, r.code, r.body)
		}
		for _, c := range cr.Citations {
			check("/v1/chat citation", c.Title, c.URL)
		}
		if cr.Citations[0].Title != "Frozen (2013 film)" || cr.Citations[0].URL != "" {
			t.Errorf("the Frozen citation %+v", cr.Citations[0])
		}
		for _, l := range badLinks {
			if strings.Contains(string(r.body), strings.TrimSpace(l)) {
				t.Errorf("the chat answer holds %q", l)
			}
		}
	}
	t.Logf("checked %d URLs, %d of bad links", checked, badSeen)
	if checked < 200 || badSeen < 50 {
		t.Errorf("checked %d URLs, %d of them of bad links: too few", checked, badSeen)
	}
}
