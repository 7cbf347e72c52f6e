package hub

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// Find locates a model by its file's sha256: in a pulled folder by its kairos-pull.json
// record (a file of another size is not taken), in a folder copied by hand by hashing, the
// folder named like the model first; a model nobody holds is "".
func TestFind(t *testing.T) {
	const repo = "sentence-transformers/tiny"
	files := modelFiles(t, repo)
	srv := httptest.NewServer(&fakeHub{files: files})
	defer srv.Close()
	root := t.TempDir()
	if _, err := Pull(context.Background(), repo, PullOptions{Endpoint: srv.URL, Root: root, Pins: Pins{}}); err != nil {
		t.Fatal(err)
	}
	onnx := files[repo+"/resolve/main/onnx/model.onnx"]
	onnxSum := sum(onnx)
	pulled := filepath.Join(root, "sentence-transformers", "tiny")

	// A hand copy elsewhere under the root, with the model file at the top.
	copied := filepath.Join(root, "mine", "tiny-copy")
	if err := os.MkdirAll(copied, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, src := range map[string][]byte{"tokenizer.json": files[repo+"/resolve/main/tokenizer.json"], "model.onnx": onnx} {
		if err := os.WriteFile(filepath.Join(copied, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name, file, sha, model string
		want                   string
	}{
		{"pulled, by record", "onnx/model.onnx", onnxSum, "tiny", pulled},
		{"copied, by hash", "model.onnx", onnxSum, "tiny-copy", copied},
		{"another sha", "onnx/model.onnx", sum([]byte("other")), "tiny", ""},
		{"no such file", "onnx/model_fp16.onnx", onnxSum, "tiny", ""},
		{"empty root", "onnx/model.onnx", onnxSum, "tiny", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := root
			if tc.name == "empty root" {
				r = filepath.Join(t.TempDir(), "absent")
			}
			got, err := Find(r, tc.file, tc.sha, tc.model)
			if err != nil || got != tc.want {
				t.Errorf("Find = %q, %v; want %q", got, err, tc.want)
			}
		})
	}

	// The pulled file replaced by one of another size: its record no longer vouches for it.
	if err := os.WriteFile(filepath.Join(pulled, "onnx", "model.onnx"), append(onnx, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(root, "onnx/model.onnx", onnxSum, "tiny"); err != nil || got != "" {
		t.Errorf("after the file changed: Find = %q, %v; want none", got, err)
	}
}
