package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A dense index searched without --model says that only BM25 ran and which flag to add.
func TestDenseIndexWithoutModelSaysSo(t *testing.T) {
	requireORTLib(t)
	model := coreShared(t, "models/synthetic/tiny-encoder")
	dir := filepath.Join(t.TempDir(), "idx")
	corpusFile := filepath.Join(t.TempDir(), "sf100.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 100)
	if _, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", dir, "--model", model, "--backend", "ort"); err != nil {
		t.Fatal(err)
	}
	const note = "has dense vectors (tiny-encoder), but without --model only BM25 runs; add --model DIR"
	tests := []struct {
		name string
		args []string
		note bool
	}{
		{"no model, no mode", []string{"search", "--index", dir, "vitamin D"}, true},
		{"bm25 asked for", []string{"search", "--index", dir, "--mode", "bm25", "vitamin D"}, false},
		{"with the model", []string{"search", "--index", dir, "--model", model, "--backend", "ort", "vitamin D"}, false},
		{"eval, no model", []string{"eval", "--index", dir, "--queries", coreShared(t, "data/beir-scifact/queries.jsonl"), "--qrels", coreShared(t, "data/beir-scifact/qrels/train.tsv")}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runCLI(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stderr, note) != tc.note {
				t.Errorf("stderr %q: note shown = %v, want %v", stderr, !tc.note, tc.note)
			}
		})
	}
}
