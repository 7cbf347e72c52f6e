package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kairos-rag/kairos/server"
)

// The page's overview of an index (what its sources, languages and dates are) draws what
// /v1/stats says: a bar per source and per language with its passage count, the largest
// first, and the date range on a time axis. The index is built as a user would, from the
// multilingual, dated Wikimedia Enterprise sample and the dated COVID FAQ.
func TestWebPageOverview(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "overview.idx")
	if _, errOut, err := runCLI(t, "index", "--quiet", "--language", "multilingual", "--index", idx,
		"--input", coreShared(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson"),
		"--input", coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")); err != nil {
		t.Fatalf("index: %v\n%s", err, errOut)
	}
	base := webServe(t, idx, "")
	resp, err := http.Get(base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st server.StatsResponse
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Index.Sources) != 2 || len(st.Index.Languages) < 2 || st.Index.DateFrom == "" {
		t.Fatalf("fixture: want two sources, several languages and dates, stats say %+v", st.Index)
	}

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(e => e !== null && !e.closest('#overview').hidden)(document.querySelector('#overview .bars li'))`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the page shows no overview of the index: %v", err)
	}
	type row struct{ Name, Count string }
	rows := func(panel string) []row {
		return evalJS[[]row](t, ctx, `Array.from(document.querySelectorAll('#overview [data-panel="`+panel+`"] .bars li')).map(li => ({Name: li.querySelector('.name').textContent, Count: li.querySelector('.count').textContent}))`)
	}
	for _, tc := range []struct {
		panel  string
		counts map[string]int
	}{{"sources", st.Index.Sources}, {"languages", st.Index.Languages}} {
		var want []row
		for name, n := range tc.counts {
			want = append(want, row{name, fmt.Sprintf("%d", n)})
		}
		slices.SortFunc(want, func(a, b row) int { return tc.counts[b.Name] - tc.counts[a.Name] })
		got := rows(tc.panel)
		if len(got) != len(want) {
			t.Fatalf("%s: page shows %v, stats say %v", tc.panel, got, tc.counts)
		}
		for i := range want {
			count, _, _ := strings.Cut(strings.ReplaceAll(got[i].Count, ",", ""), " ")
			if got[i].Name != want[i].Name || count != want[i].Count {
				t.Errorf("%s row %d: page %v, want %v (largest first)", tc.panel, i, got[i], want[i])
			}
		}
		// The largest bar spans its track; the others are drawn to scale.
		widths := evalJS[[]float64](t, ctx, `Array.from(document.querySelectorAll('#overview [data-panel="`+tc.panel+`"] .bar')).map(b => b.getBoundingClientRect().width / b.parentElement.getBoundingClientRect().width)`)
		first := tc.counts[want[0].Name]
		for i, w := range widths {
			if exp := max(0.01, float64(tc.counts[want[i].Name])/float64(first)); w < exp-0.02 || w > exp+0.02 {
				t.Errorf("%s bar %d is %.3f of its track, want %.3f", tc.panel, i, w, exp)
			}
		}
	}
	// The date range: its text is the stats' days, and its bar lies between the axis ticks
	// of the years around it.
	day := func(s string) string { return s[:10] }
	if got, want := evalJS[string](t, ctx, `document.querySelector('#overview .range-text').textContent`), day(st.Index.DateFrom)+" – "+day(st.Index.DateTo); got != want {
		t.Errorf("date range text %q, want %q", got, want)
	}
	from, _ := time.Parse(time.RFC3339, st.Index.DateFrom)
	geom := evalJS[map[string]float64](t, ctx, `(() => {
		const r = document.querySelector('#overview .range').getBoundingClientRect();
		const ticks = Object.fromEntries(Array.from(document.querySelectorAll('#overview .tick')).map(e => { const b = e.getBoundingClientRect(); return [e.textContent, b.left + b.width / 2]; }));
		return {left: r.left, right: r.right, ...ticks};
	})()`)
	decade := from.Year() / 10 * 10
	lo, hi := geom[fmt.Sprint(decade)], geom[fmt.Sprint(decade+10)]
	if lo == 0 || hi == 0 || geom["left"] < lo || geom["left"] > hi || geom["right"] <= geom["left"] {
		t.Errorf("the range bar [%.0f, %.0f] does not start between the ticks of %d (%.0f) and %d (%.0f)", geom["left"], geom["right"], decade, lo, decade+10, hi)
	}
	shot(t, ctx, "screenshot-overview.png", false)
}
