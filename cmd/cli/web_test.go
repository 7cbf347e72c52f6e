package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/server"
)

var screenshots = flag.String("web.screenshots", "", "`directory` to write the web page screenshots to (the README's: ../../server/web)")

// chromiumPath is Debian's chromium, which the Makefile installs. The browser test fails
// without it rather than skipping: CI must run it.
const chromiumPath = "/usr/bin/chromium"

// chromiumFlags keep the browser on loopback and quiet: no sandbox (CI runs as root), no
// GPU, no QUIC, no background or update traffic.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

const (
	webVitaminQuery = "vitamin D and bone density"
	webTimeQuery    = "Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?"
	webFrozenReply  = "Frozen was directed by Chris Buck and Jennifer Lee [1]."
)

// webCorpus writes a small real corpus: SciFact abstracts (vitamin D and the first 300),
// Wikipedia leads (the chat's Frozen), and the paragraphs of one TimeQA page, where the time
// need changes the order.
func webCorpus(t *testing.T, dir string) string {
	t.Helper()
	type doc struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
		URL   string `json:"url,omitempty"`
	}
	var docs []doc
	sf, err := os.ReadFile(coreShared(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(sf)), "\n") {
		var d doc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("scifact line %d: %v", i+1, err)
		}
		if i < 300 || strings.Contains(strings.ToLower(d.Text), "vitamin d") {
			docs = append(docs, d)
		}
	}
	leads, err := chattest.LoadLeads(coreShared(t, "data/wikichat-topics/recent_articles_en.json"), 120)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range leads {
		docs = append(docs, doc{p.DocID, p.Title, strings.TrimPrefix(p.Text, p.Title+" | "),
			"https://en.wikipedia.org/wiki/" + strings.ReplaceAll(p.Title, " ", "_")})
	}
	tq, tqq := filepath.Join(dir, "timeqa.jsonl"), filepath.Join(dir, "timeqa-queries.jsonl")
	if err := cmdDataset(context.Background(), []string{"timeqa", "--input", coreShared(t, "data/timeqa/human_annotated_train.json"),
		"--corpus", tq, "--queries", tqq}, IO{Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	for _, d := range readJSONL[timeQADoc](t, tq) {
		if strings.HasPrefix(d.ID, "Newton_D._Baker_House/") {
			docs = append(docs, doc{ID: d.ID, Title: d.Title, Text: d.Text})
		}
	}
	path := filepath.Join(dir, "web.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, d := range docs {
		enc.Encode(d)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// webIndex builds the BM25 index of webCorpus.
func webIndex(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	buildIndex(t, idx, indexer.Options{Inputs: []indexer.InputSpec{{Path: webCorpus(t, dir)}}})
	return idx
}

// webServe runs kairos serve (the function behind the command) on idx with chat on a
// scripted LLM, sending the chat trace, and returns its base URL. apiKey, when set, is
// required by the API.
func webServe(t *testing.T, idx, apiKey string) string {
	t.Helper()
	llm := chattest.NewServer(cliScript, 0)
	t.Cleanup(llm.Close)
	log := slog.New(slog.DiscardHandler)
	ix := newLiveIndex(indexer.Location{Dir: idx}, "", retrievalOptions{Logger: log})
	opts := server.Options{Logger: log, APIKey: apiKey, Index: ix, ChatTrace: true}
	chatter, store, err := newServeChat(context.Background(), chatOpts(llm.BaseURL()), chat.RetrieverFunc(ix.Search), ix, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	opts.Chat = chatter
	t.Cleanup(func() { store.Close() }) // registered first, so it runs after serve has stopped
	return startServe(t, opts)
}

// startServe runs serve, the function behind kairos serve, on a free loopback port until the
// test ends, and returns its base URL.
func startServe(t *testing.T, opts server.Options) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", 5*time.Second, opts, nil, func(a net.Addr) { addrc <- a })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addrc:
		return "http://" + a.String()
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return ""
}

// apiHits asks POST /v1/search directly, for the passage ids and titles the page must show.
func apiHits(t *testing.T, base string, q map[string]any) (ids, titles []string) {
	t.Helper()
	return apiHitsKey(t, base, "", q)
}

func apiHitsKey(t *testing.T, base, key string, q map[string]any) (ids, titles []string) {
	t.Helper()
	body, _ := json.Marshal(q)
	req, _ := http.NewRequest("POST", base+"/v1/search", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sr server.SearchResponse
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&sr) != nil {
		t.Fatalf("search %s: status %d", body, resp.StatusCode)
	}
	for _, h := range sr.Results[0].Hits {
		ids = append(ids, h.PassageID)
		titles = append(titles, h.Title)
	}
	return ids, titles
}

func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser test needs Debian's chromium (make setup installs it): %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromiumPath), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900)}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(strings.TrimPrefix(f, "--"), true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// pageHits reads the passage ids of the rendered results, in order.
// Only the list the script rendered from the API counts, not the server-rendered one.
const pageHitsJS = `Array.from(document.querySelectorAll('#results ol.live .hit')).map(li => li.dataset.passage || '')`

// waitHits waits until the page shows a finished search whose ids differ from prev.
func waitHits(ctx context.Context, prev []string) ([]string, error) {
	for {
		ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](pageHitsJS))
		if err != nil {
			return nil, err
		}
		busy, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('results').getAttribute('aria-busy')`))
		if err != nil {
			return nil, err
		}
		if busy == "false" && len(ids) > 0 && ids[0] != "" && !slices.Equal(ids, prev) {
			return ids, nil
		}
		select {
		case <-ctx.Done():
			return ids, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// shot saves the viewport, or the whole page when full, with -web.screenshots.
func shot(t *testing.T, ctx context.Context, name string, full bool) {
	if *screenshots == "" {
		return
	}
	a := chromedp.CaptureScreenshot()
	if full {
		a = chromedp.FullScreenshot(100) // 100: PNG
	}
	png, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The web page of kairos serve in a real browser: search as the API answers, explain, the
// time need reordering a TimeQA question, and a streamed chat turn; and the server-rendered
// results of a shared URL, as chromium --dump-dom prints them.
func TestWebPage(t *testing.T) {
	idx := webIndex(t)
	base := webServe(t, idx, "")
	ctx := newBrowser(t)

	// Search: type the query, submit with Enter, compare with the API's answer.
	wantIDs, _ := apiHits(t, base, map[string]any{"text": webVitaminQuery})
	if len(wantIDs) == 0 {
		t.Fatal("the API found nothing for the vitamin D query")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#q"),
		chromedp.SendKeys("#q", webVitaminQuery+"\r")); err != nil {
		t.Fatal(err)
	}
	got, err := waitHits(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantIDs) {
		t.Errorf("page hits %v, API hits %v", got, wantIDs)
	}
	loc := evalJS[string](t, ctx, `location.href`)
	marks := evalJS[[]string](t, ctx, `Array.from(document.querySelectorAll('#results .hit:first-child mark')).map(m => m.textContent.toLowerCase())`)
	if u, _ := url.Parse(loc); u == nil || u.Query().Get("q") != webVitaminQuery {
		t.Errorf("the URL %q does not carry the query", loc)
	}
	if !slices.Contains(marks, "vitamin") {
		t.Errorf("first hit's highlighted terms %q lack \"vitamin\"", marks)
	}

	// An API error is shown as such: this index has no dense vectors.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?mode=dense&q=vitamin")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(e => e !== null && e.textContent.startsWith('API error 400: ') && e.textContent.includes('dense'))(document.querySelector('#results .error'))`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("mode dense on a BM25 index: no API error shown (%q): %v", evalJS[string](t, ctx, `document.getElementById('results').textContent`), err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(loc)); err != nil {
		t.Fatal(err)
	}
	if got, err := waitHits(ctx, nil); err != nil || !slices.Equal(got, wantIDs) {
		t.Fatalf("back to the search: %v, %v", got, err)
	}

	// Explain: open the first hit's panel; its final score is the hit's score.
	if err := chromedp.Do(ctx, chromedp.Click("#results .hit:first-child details.explain summary")); err != nil {
		t.Fatal(err)
	}
	open := evalJS[bool](t, ctx, `document.querySelector('#results .hit:first-child details.explain').open`)
	final := evalJS[string](t, ctx, `Array.from(document.querySelectorAll('#results .hit:first-child details.explain tr')).find(r => r.cells[0].textContent === 'Final').cells[1].textContent`)
	score := evalJS[string](t, ctx, `document.querySelector('#results .hit:first-child .score').textContent`)
	if !open || "score "+final != score {
		t.Errorf("explain panel open=%v final %q, hit %q", open, final, score)
	}

	// Time need: a TimeQA question from a shared URL (time none), then auto from the form.
	noneIDs, _ := apiHits(t, base, map[string]any{"text": webTimeQuery, "time": "none", "rerank": "time"})
	autoIDs, _ := apiHits(t, base, map[string]any{"text": webTimeQuery, "time": "auto", "rerank": "time"})
	if slices.Equal(noneIDs, autoIDs) {
		t.Fatalf("fixture: time auto does not change the order of %q: %v", webTimeQuery, noneIDs)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?rerank=time&time=none&q="+url.QueryEscape(webTimeQuery))); err != nil {
		t.Fatal(err)
	}
	before, err := waitHits(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, noneIDs) {
		t.Errorf("time none: page %v, API %v", before, noneIDs)
	}
	evalJS[bool](t, ctx, `document.getElementById('time').value = 'auto', document.getElementById('time').dispatchEvent(new Event('change')), true`)
	after, err := waitHits(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after, autoIDs) {
		t.Errorf("time auto: page %v, API %v", after, autoIDs)
	}
	loc = evalJS[string](t, ctx, `location.href`)
	if u, _ := url.Parse(loc); u == nil || u.Query().Get("time") != "auto" {
		t.Errorf("the URL %q does not carry time=auto", loc)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#results ol.live .hit:first-child details.explain summary")); err != nil {
		t.Fatal(err)
	}
	// The time part of the explanation is there, and the years the passage mentions.
	if got := evalJS[string](t, ctx, `Array.from(document.querySelectorAll('#results ol.live .hit:first-child details.explain tr')).find(r => r.cells[0].textContent === 'Time').cells[1].textContent`); got == "–" {
		t.Error("time auto: the explain panel has no time score")
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#results ol.live .hit:first-child .years span') !== null`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("the first TimeQA hit shows no years: %v", err)
	}
	shot(t, ctx, "screenshot-search.png", false)

	// Block types: the page filters as the API does. The fixture holds prose only, so "text"
	// finds what the API finds and "table" finds nothing.
	textIDs, _ := apiHits(t, base, map[string]any{"text": webVitaminQuery, "filters": map[string]any{"block_type": "text"}})
	tableIDs, _ := apiHits(t, base, map[string]any{"text": webVitaminQuery, "filters": map[string]any{"block_type": "table"}})
	if len(textIDs) == 0 || len(tableIDs) != 0 {
		t.Fatalf("fixture: block_type text finds %d, table %d; want some and none", len(textIDs), len(tableIDs))
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?block_type=text&q="+url.QueryEscape(webVitaminQuery))); err != nil {
		t.Fatal(err)
	}
	if got, err := waitHits(ctx, nil); err != nil || !slices.Equal(got, textIDs) {
		t.Errorf("block_type=text: page %v (%v), API %v", got, err, textIDs)
	}
	if v := evalJS[string](t, ctx, `document.getElementById('block_type').value`); v != "text" {
		t.Errorf("block_type=text in the URL: the form says %q", v)
	}
	evalJS[bool](t, ctx, `document.getElementById('block_type').value = 'table', document.getElementById('block_type').dispatchEvent(new Event('change')), true`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('summary').textContent.startsWith('0 results')`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("block type table: the page does not say 0 results (%q): %v", evalJS[string](t, ctx, `document.getElementById('summary').textContent`), err)
	}
	if u, _ := url.Parse(evalJS[string](t, ctx, `location.href`)); u == nil || u.Query().Get("block_type") != "table" {
		t.Error("the URL does not carry block_type=table")
	}

	// Chat: one turn to the scripted LLM, streamed; count the reply's updates as it streams.
	if err := chromedp.Do(ctx, chromedp.Click("#tab-chat"), chromedp.WaitVisible("#message")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys("#message", "Who directed Frozen?\r")); err != nil {
		t.Fatal(err)
	}
	// The turn is over when the reply is no longer busy (the stream has ended).
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#chat-log .bot[aria-busy="false"]') !== null`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the chat turn did not finish: %v", err)
	}
	reply := evalJS[string](t, ctx, `document.querySelector('#chat-log .bot .reply').textContent`)
	stages := evalJS[string](t, ctx, `Array.from(document.querySelectorAll('#trace-body th')).map(th => th.textContent).join(' ')`)
	tokens := evalJS[string](t, ctx, `document.querySelector('#chat-log .bot').dataset.tokens || '0'`)
	if reply != webFrozenReply {
		t.Errorf("chat reply %q, want %q", reply, webFrozenReply)
	}
	for _, st := range []string{"query", "retrieve", "verify", "refine"} {
		if !strings.Contains(stages, st) {
			t.Errorf("trace stages %q lack %s", stages, st)
		}
	}
	// wikichat streams its refine stage's revision a checked sentence a token event (that
	// they come from the LLM's stream is TestWikiChatStreamsTheFinalStage's to show): the
	// reply's one sentence, one event.
	if n, _ := strconv.Atoi(tokens); n != 1 {
		t.Errorf("the page read %s token events for a reply of one sentence", tokens)
	}
	if evalJS[int](t, ctx, `document.querySelectorAll('#chat-log .citations li').length`) == 0 {
		t.Fatal("the chat answer shows no citations")
	}
	// The reply's [1] links to source 1, the Frozen lead, numbered 1 and carrying its URL.
	if got := evalJS[string](t, ctx, `(a => a ? a.textContent + ' ' + document.querySelector(a.getAttribute('href')).value + ' ' +
		document.querySelector(a.getAttribute('href') + ' summary').textContent.split(' ')[0] + ' ' +
		document.querySelector(a.getAttribute('href') + ' a.source').href : 'none')(document.querySelector('#chat-log .bot .reply sup.cite a'))`); got != "1 1 Frozen https://en.wikipedia.org/wiki/Frozen_(2013_film)" {
		t.Errorf("the reply's citation marker: %q", got)
	}
	// The Frozen lead's citation opens, from the keyboard, on the passage's text from
	// GET /v1/passages/{id}. (Citations come in the order the pipeline's parallel stages
	// retrieved them, so it is found by title.)
	const frozenCite = `Array.from(document.querySelectorAll('#chat-log .citations details')).find(d => d.querySelector('summary').textContent.startsWith('Frozen (2013 film)'))`
	if !evalJS[bool](t, ctx, `(d => d ? (d.querySelector('summary').focus(), true) : false)(`+frozenCite+`)`) {
		t.Fatal("no citation of the Frozen (2013 film) lead")
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](frozenCite+`.querySelector('.passage').textContent.includes('Chris Buck')`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("the Frozen citation does not show its passage: %v", err)
	}
	shot(t, ctx, "screenshot-chat.png", true)

	// A second turn continues the conversation: the page sends back the id and the session
	// token the server returned (a conversation it did not own would be a 404 here).
	if err := chromedp.Do(ctx, chromedp.SendKeys("#message", "Who directed Frozen?\r")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('#chat-log .bot[aria-busy="false"]').length === 2`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the second chat turn did not finish: %v", err)
	}
	if e := evalJS[string](t, ctx, `Array.from(document.querySelectorAll('#chat-log .error')).map(e => e.textContent).join(' ')`); e != "" {
		t.Errorf("second turn: %s", e)
	}
	if evalJS[string](t, ctx, `sessionStorage.getItem('kairos-session') || ''`) == "" {
		t.Error("the page kept no session token")
	}

	// A shared URL: the result titles are in the DOM chromium dumps at load.
	_, titles := apiHits(t, base, map[string]any{"text": webVitaminQuery})
	args := append(slices.Clone(chromiumFlags), "--user-data-dir="+t.TempDir(), "--dump-dom", base+"/?q=vitamin+D+and+bone+density")
	dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(dctx, chromiumPath, args...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `class="title"`) {
			n++
		}
	}
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;")
	for _, title := range titles {
		if !strings.Contains(string(out), esc.Replace(title)) {
			t.Errorf("dump-dom lacks the title %q", title)
		}
	}
	if n != len(titles) {
		t.Errorf("dump-dom has %d result titles, the API %d", n, len(titles))
	}
}

// With an API key the page asks for it on the first 401, then searches with it.
func TestWebPageAPIKey(t *testing.T) {
	base := webServe(t, webIndex(t), "k3y")
	ctx := newBrowser(t)
	wantIDs, _ := apiHitsKey(t, base, "k3y", map[string]any{"text": webVitaminQuery})
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?q=vitamin+D+and+bone+density"), chromedp.WaitVisible("#key-form")); err != nil {
		t.Fatal(err)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#results .hit').length`); n != 0 {
		t.Errorf("%d hits shown before the key was given", n)
	}
	if msg := evalJS[string](t, ctx, `document.getElementById('error').textContent`); !strings.Contains(msg, "401") {
		t.Errorf("the error box says %q, want the API's 401", msg)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys("#api-key", "k3y\r")); err != nil {
		t.Fatal(err)
	}
	got, err := waitHits(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantIDs) {
		t.Errorf("with the key: page %v, API %v", got, wantIDs)
	}
	if facts := evalJS[string](t, ctx, `document.getElementById('facts').textContent`); !strings.Contains(facts, "Passages") {
		t.Errorf("index facts %q", facts)
	}
}
