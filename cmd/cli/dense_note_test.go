package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat/chattest"
)

// A dense index searched without --model, whose model folder is gone and not in the models
// cache, says that only BM25 ran, what is missing and which flag to add. While the folder
// was there, search, eval and chat used it and said so, as serve does.
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
	queries, qrels := coreShared(t, "data/beir-scifact/queries.jsonl"), coreShared(t, "data/beir-scifact/qrels/train.tsv")
	llm := chattest.NewServer(chattest.Honest(), 0)
	defer llm.Close()
	chatArgs := []string{"chat", "--index", dir, "--models-dir", cache, "--llm-url", llm.BaseURL(), "--llm-model", "fake", "--message", "Is vitamin D made in the skin?"}
	// search, eval and chat find the model as serve does, and say which folder they use.
	using := "no --model: using " + model + " (tiny-encoder), the folder the index was built with"
	for _, args := range [][]string{
		{"search", "--index", dir, "--models-dir", cache, "vitamin D"},
		{"eval", "--index", dir, "--models-dir", cache, "--queries", queries, "--qrels", qrels, "--json"},
		chatArgs,
	} {
		out, stderr, err := runCLI(t, args...)
		if err != nil || !strings.Contains(stderr, using) {
			t.Fatalf("%s with the model folder in place: %v\n%s", args[0], err, stderr)
		}
		if args[0] == "eval" && !strings.Contains(out, `"mode": "hybrid"`) {
			t.Errorf("eval ran another mode than search:\n%s", out)
		}
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
		{"eval, no model", []string{"eval", "--index", dir, "--models-dir", cache, "--queries", queries, "--qrels", qrels}, true},
		{"chat, no model", chatArgs, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runCLI(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stderr, note) != tc.note || strings.Contains(stderr, flag) != tc.note {
				t.Errorf("stderr %q: note shown = %v, want %v", stderr, !tc.note, tc.note)
			}
		})
	}
}
