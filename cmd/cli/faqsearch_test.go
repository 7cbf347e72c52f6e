package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchFAQEntryAndMinScore: on the COVID FAQ, the top hit of a question carries its
// answer, --min-score above every hit answers nothing, and a batch line naming "query" for
// "text" is refused with the right name, as POST /v1/search refuses it.
func TestSearchFAQEntryAndMinScore(t *testing.T) {
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	dir := filepath.Join(t.TempDir(), "idx")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", faq, "--index", dir); err != nil {
		t.Fatal(err)
	}
	const q = "how long does the virus survive on surfaces"
	var res struct {
		Hits []struct {
			Text  string  `json:"text"`
			Title string  `json:"title"`
			Score float64 `json:"score"`
		} `json:"hits"`
	}
	for _, tc := range []struct {
		name     string
		minScore string
		wantHits int
	}{
		{"no threshold", "", 3},
		{"weak threshold", "0.001", 3},
		{"above every hit", "1000", 0},
	} {
		args := []string{"search", "--index", dir, "--json", "-k", "3"}
		if tc.minScore != "" {
			args = append(args, "--min-score", tc.minScore)
		}
		out, _, err := runCLI(t, append(args, q)...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res.Hits = nil
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		if len(res.Hits) != tc.wantHits {
			t.Fatalf("%s: %d hits, want %d", tc.name, len(res.Hits), tc.wantHits)
		}
		if tc.wantHits > 0 && !strings.HasPrefix(res.Hits[0].Text, res.Hits[0].Title+" | It is not certain how long") {
			t.Errorf("%s: top hit %q lacks its answer", tc.name, res.Hits[0].Text)
		}
	}
	queries := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(queries, []byte(`{"id": "1", "text": "pets", "metadata": {"x": 1}}
{"id": "2", "query": "pets"}
`), 0o644)
	_, _, err := runCLI(t, "search", "--index", dir, "--batch", queries)
	if want := `line 2: unknown field "query" (did you mean "text"?)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("batch line: %v, want %q", err, want)
	}
}

// The columns an FAQ build used are where the README says: the manifest's inputs (stats
// --json) and kairos stats, for a build and for a build resumed from a checkpoint.
func TestFAQColumnsReported(t *testing.T) {
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	const want = "columns answer=answer category=category date=last_update question=question url=link (role=column)"
	for _, extra := range [][]string{nil, {"--batch", "50", "--checkpoint-every", "1", "--checkpoint-after", "0"}} {
		idx := filepath.Join(t.TempDir(), "idx")
		if _, stderr, err := runCLI(t, append([]string{"index", "--quiet", "--input", faq, "--index", idx}, extra...)...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		out, _, err := runCLI(t, "stats", "--index", idx)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("%v: stats lacks %q:\n%s", extra, want, out)
		}
		js, _, _ := runCLI(t, "stats", "--index", idx, "--json")
		var st struct {
			Inputs []struct{ Columns map[string]string }
		}
		if err := json.Unmarshal([]byte(js), &st); err != nil || len(st.Inputs) != 1 || st.Inputs[0].Columns["date"] != "last_update" {
			t.Errorf("%v: stats --json inputs %+v (%v)", extra, st.Inputs, err)
		}
	}
}
