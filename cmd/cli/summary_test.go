package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// The build summary's counts read as English; an update that wrote nothing and a resumed build
// (whose passages are not all this run's) report no rate.
func TestPrintSummary(t *testing.T) {
	tests := []struct {
		name      string
		sum       indexer.Summary
		want, not []string
	}{
		{"build", indexer.Summary{Counts: indexer.Counts{Passages: 10}, Elapsed: time.Second,
			Language: indexer.LanguageChoice{Choice: langanalysis.Choice{Language: "en", Analyzer: "en"}, From: "default"}},
			[]string{"passages/s  10\n", "language    en, analyzer en (default)\n"}, []string{"language language"}},
		{"one of each", indexer.Summary{Elapsed: time.Second, NotFound: []string{"x"},
			Update: &indexer.UpdateCounts{Added: 1, Changed: 1, Unchanged: 1, Deleted: 1, PassagesAdded: 3}},
			[]string{"added       1 document\n", "deleted     1 document\n", "not found   1 document id: x\n", "passages/s"}, nil},
		{"resume without a checkpoint", indexer.Summary{Dir: "x.idx", Elapsed: time.Second, NoCheckpoint: true},
			[]string{"resumed     no: x.idx had no checkpoint, so the whole input was indexed\n"}, nil},
		{"stages", indexer.Summary{Counts: indexer.Counts{Passages: 10}, Elapsed: 2 * time.Second, Stages: &indexer.BuildStages{
			Decompress: indexer.StageTime{Busy: time.Second, Items: 3, Bytes: 5e6},
			Parse:      indexer.StageTime{Busy: 500 * time.Millisecond, Items: 100, Bytes: 4e6},
			Split:      indexer.StageTime{Busy: 100 * time.Millisecond, Items: 10},
			Index:      indexer.StageTime{Busy: 3 * time.Second, Items: 10},
			Write:      indexer.StageTime{Busy: 250 * time.Millisecond, Items: 10}}},
			[]string{"  decompress       1.00 s  5.0 MB/s of text            0.50\n", "  parse+clean      0.50 s  200 pages/s", "  split            0.10 s  100 passages/s", "  index            3.00 s  3 passages/s                1.50\n", "  write            0.25 s  40 passages/s"},
			[]string{"batch"}},
		{"resumed, bm25 first", indexer.Summary{Counts: indexer.Counts{Passages: 10000}, Elapsed: time.Second, Resumed: 10000, LexicalGeneration: 1},
			[]string{"bm25 first  generation 1, live since the interrupted run\n", "seconds     1.00 (this run)\n"}, []string{"passages/s", "live after"}},
		{"resumed in the bm25 half", indexer.Summary{Counts: indexer.Counts{Passages: 10000}, Elapsed: 3 * time.Second, Resumed: 500, LexicalGeneration: 1, LexicalElapsed: time.Second},
			[]string{"bm25 first  generation 1, live after 1.00 s while the vectors were embedded\n", "seconds     3.00 (this run)\n"}, []string{"passages/s", "live since"}},
		{"bm25 first", indexer.Summary{Counts: indexer.Counts{Passages: 10}, Elapsed: 2 * time.Second, LexicalGeneration: 1, LexicalElapsed: time.Second},
			[]string{"bm25 first  generation 1, live after 1.00 s while the vectors were embedded\n", "passages/s  5\n"}, nil},
		{"no-op update", indexer.Summary{Elapsed: time.Second, Update: &indexer.UpdateCounts{Unchanged: 2}},
			[]string{"unchanged   2 documents\n", "deleted     0 documents\n"}, []string{"passages/s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printSummary(IO{Stdout: &out, Stderr: &out}, &tc.sum)
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("summary has %q:\n%s", n, out.String())
				}
			}
		})
	}
}
