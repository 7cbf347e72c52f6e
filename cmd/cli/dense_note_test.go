package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dense index searched without --model, whose model folder is gone and not in the models
// cache, says that only BM25 ran, what is missing and which flag to add. While the folder
// was there, search used it and said so.
func TestDenseIndexWithoutModelSaysSo(t *testing.T) {
	requireORTLib(t)
	model := filepath.Join(t.TempDir(), "tiny-encoder")
	if err := os.CopyFS(model, os.DirFS(coreShared(t, "models/synthetic/tiny-encoder"))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "idx")
	corpusFile := filepath.Join(t.TempDir(), "sf100.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 100)
	if _, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", dir, "--model", model, "--backend", "ort"); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if _, stderr, err := runCLI(t, "search", "--index", dir, "--models-dir", cache, "vitamin D"); err != nil ||
		!strings.Contains(stderr, "no --model: using "+model+" (tiny-encoder), the folder the index was built with") {
		t.Fatalf("with the model folder in place: %v\n%s", err, stderr)
	}
	if err := os.RemoveAll(model); err != nil {
		t.Fatal(err)
	}
	note := "has dense vectors (tiny-encoder (its model folder " + model + " is gone); no model in " + cache +
		" has its model.onnx (sha256 "
	const flag = "but without --model only BM25 runs; add --model DIR"
	tests := []struct {
		name string
		args []string
		note bool
	}{
		{"no model, no mode", []string{"search", "--index", dir, "--models-dir", cache, "vitamin D"}, true},
		{"bm25 asked for", []string{"search", "--index", dir, "--models-dir", cache, "--mode", "bm25", "vitamin D"}, false},
		{"with the model", []string{"search", "--index", dir, "--model", coreShared(t, "models/synthetic/tiny-encoder"), "--backend", "ort", "vitamin D"}, false},
		{"eval, no model", []string{"eval", "--index", dir, "--queries", coreShared(t, "data/beir-scifact/queries.jsonl"), "--qrels", coreShared(t, "data/beir-scifact/qrels/train.tsv")}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runCLI(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "eval, no model" { // eval does not look for the model: it runs what it is told
				note = "has dense vectors (tiny-encoder), "
			}
			if strings.Contains(stderr, note) != tc.note || strings.Contains(stderr, flag) != tc.note {
				t.Errorf("stderr %q: note shown = %v, want %v", stderr, !tc.note, tc.note)
			}
		})
	}
}
