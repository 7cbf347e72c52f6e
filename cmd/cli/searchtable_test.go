package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hits table fits --width (the text column takes what the others leave, at least
// minTextWidth), keeps its 100-character text when no width is known, and with --explain
// says under each hit how its score is made: on both lexical engines, the printed score is
// bm25 + doc_evidence, and --json carries the same parts in scores and explain.formula.
func TestSearchTableWidthAndExplain(t *testing.T) {
	corpusFile := filepath.Join(t.TempDir(), "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 300)
	const query = "vitamin D deficiency and bone density"
	for _, engine := range []string{"postings", "bleve"} {
		t.Run(engine, func(t *testing.T) {
			idx := filepath.Join(t.TempDir(), "idx")
			if _, stderr, err := runCLI(t, "index", "--quiet", "--lexical", engine, "--input", corpusFile, "--index", idx); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			for _, tc := range []struct {
				width   string
				maxLine int
			}{{"60", 60}, {"120", 120}, {"0", 0}} {
				out, _, err := runCLI(t, "search", "--index", idx, "-k", "5", "--width", tc.width, query)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				if len(lines) != 6 || !strings.HasPrefix(lines[0], "RANK  SCORE  PASSAGE") {
					t.Fatalf("--width %s:\n%s", tc.width, out)
				}
				for _, l := range lines {
					n := utf8.RuneCountInString(l)
					textLen := utf8.RuneCountInString(l[strings.Index(lines[0], "TEXT"):])
					switch {
					case tc.maxLine > 0 && n > tc.maxLine:
						t.Errorf("--width %s: a line of %d columns: %q", tc.width, n, l)
					case tc.maxLine == 0 && textLen > defaultTextWidth:
						t.Errorf("no width: text of %d characters: %q", textLen, l)
					case tc.maxLine == 120 && n < 110 && strings.HasSuffix(l, "…"):
						t.Errorf("--width 120: clipped short at %d columns: %q", n, l)
					}
				}
			}

			out, _, err := runCLI(t, "search", "--index", idx, "-k", "3", "--explain", query)
			if err != nil {
				t.Fatal(err)
			}
			note := regexp.MustCompile(`(?m)^ +retrieval ([0-9.e+-]+) = bm25 ([0-9.e+-]+) \+ doc_evidence ([0-9.e+-]+) \(`)
			ms := note.FindAllStringSubmatch(out, -1)
			if len(ms) != 3 || strings.Count(out, "(the SCORE column)") != 3 {
				t.Fatalf("--explain table:\n%s", out)
			}
			for _, m := range ms {
				var v [3]float64
				for i := range v {
					v[i], _ = strconv.ParseFloat(m[i+1], 64)
				}
				if math.Abs(v[0]-v[1]-v[2]) > 2e-3*v[0] {
					t.Errorf("%s: %v + %v != %v", m[0], v[1], v[2], v[0])
				}
			}

			out, _, err = runCLI(t, "search", "--index", idx, "-k", "3", "--explain", "--json", query)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Hits []struct {
					Score   float64
					Scores  map[string]float64
					Explain struct{ Formula string }
				}
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			lifted := 0
			for _, h := range res.Hits {
				if math.Abs(h.Score-h.Scores["bm25"]-h.Scores["doc_evidence"]) > 1e-9 || !strings.HasPrefix(h.Explain.Formula, "retrieval ") {
					t.Errorf("hit: score %v, scores %v, formula %q", h.Score, h.Scores, h.Explain.Formula)
				}
				if h.Scores["doc_evidence"] > 0 {
					lifted++
				}
			}
			if lifted == 0 {
				t.Errorf("no hit lifted by document evidence: the test shows nothing (%s)", out)
			}
		})
	}
}
