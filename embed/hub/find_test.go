package hub

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// A pull that fails leaves no empty folder: with no answer from the endpoint (an
// UnreachableError naming it) the folders it made are gone and an existing root stays; with
// the ONNX file refused (pin mismatch), the files fetched stay and the empty onnx/ does not.
func TestPullFailureLeavesNoEmptyFolders(t *testing.T) {
	closed := httptest.NewServer(nil)
	endpoint := closed.URL
	closed.Close()
	for _, tc := range []struct {
		name     string
		root     func(t *testing.T) string
		wantLeft []string // folders under the root's parent after the failure
	}{
		{"new root", func(t *testing.T) string { return filepath.Join(t.TempDir(), "models") }, nil},
		{"existing root", func(t *testing.T) string { return t.TempDir() }, []string{"."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.root(t)
			_, err := Pull(context.Background(), "owner/model", PullOptions{Endpoint: endpoint, Root: root})
			var ue *UnreachableError
			if !errors.As(err, &ue) || ue.Endpoint != endpoint || !strings.Contains(err.Error(), "cannot reach "+endpoint) {
				t.Fatalf("err = %v, want an UnreachableError naming %s", err, endpoint)
			}
			left := dirsUnder(t, root)
			if !slices.Equal(left, tc.wantLeft) {
				t.Errorf("folders left: %v, want %v", left, tc.wantLeft)
			}
		})
	}

	const repo = "owner/bad-onnx"
	srv := httptest.NewServer(&fakeHub{files: modelFiles(t, repo)})
	defer srv.Close()
	root := t.TempDir()
	pins := Pins{repo: {"onnx/model.onnx": {0, sum([]byte("another file"))}}}
	if _, err := Pull(context.Background(), repo, PullOptions{Endpoint: srv.URL, Root: root, Pins: pins}); err == nil || !strings.Contains(err.Error(), "PIN MISMATCH") {
		t.Fatalf("err = %v, want the ONNX file refused", err)
	}
	if left := dirsUnder(t, root); !slices.Equal(left, []string{".", "owner", "owner/bad-onnx"}) {
		t.Errorf("folders left: %v (the empty onnx/ should be gone)", left)
	}
	if _, err := os.Stat(filepath.Join(root, repo, "config.json")); err != nil {
		t.Errorf("a file fetched whole was removed: %v", err)
	}
}

// dirsUnder lists root and the folders under it (slash paths relative to root); none when
// root does not exist.
func dirsUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}
