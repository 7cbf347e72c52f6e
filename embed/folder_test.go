package embed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --model that names no model folder is refused as such, saying what a model folder is or
// which ones are below the folder named; every model folder of ../shared passes.
func TestCheckModelFolder(t *testing.T) {
	requireModel(t, synthetic("minilm-l6"))
	dir := t.TempDir()
	file := filepath.Join(dir, "README.md")
	writeFile(t, file, "models")
	tests := []struct {
		name string
		dir  string
		want string // "" for a model folder
	}{
		{"missing", filepath.Join(dir, "nonexistent", "model"), "nonexistent/model: not a model folder: no such folder; a model folder holds config.json"},
		{"a file", file, "README.md: not a model folder: a file, not a folder; a model folder holds"},
		{"an empty folder", dir, ": not a model folder: no config.json or model file; a model folder holds"},
		{"a folder of model folders", sharedModels, "models: not a model folder: no config.json or model file here; model folders below it: " +
			synthetic("ce-tinybert-l2") + ", " + synthetic("minilm-l6") + ", " + synthetic("minilm-l6-int8") + ", ..."},
	}
	for _, name := range []string{"minilm-l6", "minilm-l6-int8", "static-model2vec", "static-st", "tiny-encoder", "tiny-cross-encoder", "ce-tinybert-l2"} {
		tests = append(tests, struct{ name, dir, want string }{name, synthetic(name), ""})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkModelFolder(tc.dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("a model folder refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNotModelFolder) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v\nwant ErrNotModelFolder with %q", err, tc.want)
			}
		})
	}
	// Through OpenEncoder and OpenCrossEncoder, before any file of the folder is read.
	missing := filepath.Join(dir, "nonexistent")
	if _, err := OpenEncoder(t.Context(), Options{ModelDir: missing}); !errors.Is(err, ErrNotModelFolder) {
		t.Errorf("OpenEncoder: %v", err)
	}
	if _, err := OpenCrossEncoder(t.Context(), Options{ModelDir: file}); !errors.Is(err, ErrNotModelFolder) {
		t.Errorf("OpenCrossEncoder: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("opening a missing folder created it")
	}
}
