package cli

import (
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kairos-rag/kairos/chat/chattest"
)

// The chat tab in a real browser marks a reply no source checked (mpc) as such, and a
// wikichat reply as checked; the page makes no link of a URL that is not http(s), whatever
// it is sent.
func TestWebChatMarksUngroundedReplies(t *testing.T) {
	n := 0
	idx, _ := leadsIndex(t, func(title string) string {
		n++
		if n%2 == 0 {
			return "javascript:alert(1)" // removed at indexing; the page is checked anyway
		}
		return wikiLink(title)
	})
	llm := chattest.NewServer(serveScript, 0)
	defer llm.Close()
	s := chatServe(t, idx, llm.BaseURL(), "--chat-rate-limit", "-1")
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.base+"/#chat"), chromedp.WaitVisible("#message")); err != nil {
		t.Fatal(err)
	}
	send := func(pipeline string, turn int) {
		t.Helper()
		evalJS[bool](t, ctx, `document.getElementById('pipeline').value = '`+pipeline+`', true`)
		if err := chromedp.Do(ctx, chromedp.SendKeys("#message", "Who directed Frozen?\r")); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('#chat-log .bot[aria-busy="false"]').length === `+strconv.Itoa(turn),
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the %s turn did not finish: %v", pipeline, err)
		}
	}
	send("mpc", 1)
	const last = `Array.from(document.querySelectorAll('#chat-log .bot')).pop()`
	if got := evalJS[string](t, ctx, `(b => b.dataset.grounded + ' ' + b.classList.contains('ungrounded') + ' ' + (b.querySelector('.grounding.unchecked') || {textContent: 'none'}).textContent)(`+last+`)`); got !=
		"false true Not checked against sources: the mpc pipeline answers from the model, its memory or examples, and nothing verified this reply." {
		t.Errorf("the mpc reply: %q", got)
	}
	if e := evalJS[string](t, ctx, `Array.from(document.querySelectorAll('#chat-log .error')).map(e => e.textContent).join(' ')`); e != "" {
		t.Fatalf("chat error: %s", e)
	}
	shot(t, ctx, "screenshot-chat-ungrounded.png", false)

	send("wikichat", 2)
	if got := evalJS[string](t, ctx, `(b => b.dataset.grounded + ' ' + b.classList.contains('ungrounded') + ' ' + (b.querySelector('.grounding.checked') || {textContent: 'none'}).textContent)(`+last+`)`); got !=
		"true false Checked: every sentence is supported by the cited passages." {
		t.Errorf("the wikichat reply: %q", got)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#chat-log .citations a.source').length`); n == 0 {
		t.Error("the wikichat reply links no source")
	}
	if bad := evalJS[int](t, ctx, `Array.from(document.querySelectorAll('a[href]')).filter(a => !/^(https?:|#|\/)/i.test(a.getAttribute('href'))).length`); bad != 0 {
		t.Errorf("%d links of another scheme on the page", bad)
	}
	for _, tt := range []struct{ in, want string }{
		{"https://en.wikipedia.org/wiki/Frozen", "https://en.wikipedia.org/wiki/Frozen"},
		{"javascript:alert(1)", "null"}, {" JavaScript:alert(1)", "null"}, {"data:text/html,x", "null"}, {"//evil.example/x", "null"},
		{"/wiki/X", "null"}, {"vbscript:msgbox(1)", "null"},
	} {
		if got := evalJS[string](t, ctx, `String(safeHref(`+jsString(tt.in)+`))`); got != tt.want {
			t.Errorf("safeHref(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func jsString(s string) string {
	out := `"`
	for _, r := range s {
		if r == '"' || r == '\\' {
			out += `\`
		}
		out += string(r)
	}
	return out + `"`
}
