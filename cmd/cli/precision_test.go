package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// precisionFolder is tiny-encoder with two model files: its fp32 model.onnx and the fp16 file
// `make models-fp16` converts from it (float16 outputs).
func precisionFolder(t *testing.T) string {
	t.Helper()
	root := os.Getenv("KAIROS_FIXTURES")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache", "kairos", "fixtures")
	}
	fp16, err := filepath.Abs(filepath.Join(root, "tiny-fp16-io", "model_fp16.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fp16); err != nil {
		t.Fatalf("fp16 fixture missing: run `make models-fp16` (%v)", err)
	}
	src, err := filepath.Abs(coreShared(t, "models/synthetic/tiny-encoder"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(fp16, filepath.Join(dir, "model_fp16.onnx")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An index built at one precision records it; a search at another is refused with the flag
// that fixes it, and a search at the same precision runs. A precision the folder lacks fails
// before anything is written, naming the files it has.
func TestIndexRecordsPrecision(t *testing.T) {
	requireORTLib(t)
	model := precisionFolder(t)
	corpusFile := filepath.Join(t.TempDir(), "sf100.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 100)
	idx := filepath.Join(t.TempDir(), "idx")

	_, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", idx, "--model", model, "--precision", "int8")
	if err == nil || !strings.Contains(err.Error(), "no int8 ONNX file") || !strings.Contains(err.Error(), "model.onnx (fp32), model_fp16.onnx (fp16)") {
		t.Fatalf("--precision int8: %v, want an error naming the folder's files", err)
	}
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", idx, "--model", model, "--precision", "fp16"); err != nil {
		t.Fatalf("index --precision fp16: %v\n%s", err, stderr)
	}
	gen, err := manifest.Current(idx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dense == nil || m.Dense.Model.ONNXFile != "model_fp16.onnx" || m.Dense.Model.Precision != "fp16" {
		t.Errorf("manifest's model: %+v, want model_fp16.onnx at fp16", m.Dense)
	}
	// The fix a refusal names is the one that works: --precision only for the same model at
	// another precision; another model gets the index's own.
	other := coreShared(t, "models/synthetic/minilm-l6") // fp32, another model
	static := coreShared(t, "models/synthetic/static-st")
	useIndexModel := "use the index's own model: --model " + model + " (or no --model: it is found there)"
	tests := []struct {
		name     string
		args     []string
		wantErr  string
		notInErr string
	}{
		{"default precision", []string{"--model", model},
			"precision fp32 (model.onnx), index built with fp16 (model_fp16.onnx): if the folder has model_fp16.onnx (the index's fp16 file), pass --precision fp16; else " + useIndexModel, ""},
		{"same precision", []string{"--model", model, "--precision", "fp16"}, "", ""},
		{"another model", []string{"--model", other}, "dimension 384, index has 64: " + useIndexModel, "--precision"},
		{"a static model", []string{"--model", static}, "a static model, index built with a onnx model", "--precision"},
		{"a static model with --precision", []string{"--model", static, "--precision", "fp16"}, "--precision fp16 does not apply (the table is used as stored): drop --precision", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"search", "--index", idx, "--mode", "dense", "-k", "3", "cell biology"}, tc.args...)
			out, stderr, err := runCLI(t, args...)
			if tc.wantErr == "" {
				if err != nil || out == "" {
					t.Fatalf("search: %v (output %q)\n%s", err, out, stderr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("search: %v\nwant one line with %q", err, tc.wantErr)
			}
			if tc.notInErr != "" && strings.Contains(err.Error(), tc.notInErr) {
				t.Errorf("search: %v\nnames %s, which does not fix it", err, tc.notInErr)
			}
		})
	}
}
