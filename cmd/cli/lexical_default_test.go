package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexDefaultLexical: `kairos index` with no --lexical builds Kairos's postings, with
// --lexical bleve builds bleve, an update keeps the engine of the index, and `kairos stats`
// names it (text and JSON).
func TestIndexDefaultLexical(t *testing.T) {
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "postings"},
		{[]string{"--lexical", "bleve"}, "bleve"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			args := append([]string{"index", "--quiet", "--input", faq, "--index", dir}, tc.flags...)
			if _, _, err := runCLI(t, args...); err != nil {
				t.Fatal(err)
			}
			// An update names no engine: it keeps the index's.
			if _, _, err := runCLI(t, "index", "--quiet", "--update", "--input", faq, "--index", dir); err != nil {
				t.Fatal(err)
			}
			out, _, err := runCLI(t, "stats", "--index", dir)
			if err != nil || !strings.Contains(out, "\nlexical     "+tc.want+"\n") {
				t.Errorf("stats: %v, want a line naming the %s engine:\n%s", err, tc.want, out)
			}
			out, _, err = runCLI(t, "stats", "--index", dir, "--json")
			var st struct {
				Lexical string `json:"lexical_engine"`
				Options struct {
					Lexical string `json:"lexical"`
				} `json:"build_options"`
			}
			if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Lexical != tc.want || st.Options.Lexical != tc.want {
				t.Errorf("stats --json: %v, lexical_engine %q, build_options.lexical %q, want %q", err, st.Lexical, st.Options.Lexical, tc.want)
			}
			if out, _, err := runCLI(t, "verify", "--index", dir); err != nil || !strings.HasSuffix(out, "ok\n") {
				t.Errorf("verify: %v\n%s", err, out)
			}
		})
	}
}
