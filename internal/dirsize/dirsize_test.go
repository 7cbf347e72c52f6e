package dirsize

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBytes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, size := range map[string]int{"x": 10, "a/y": 200, "a/b/z": 3000} {
		if err := os.WriteFile(filepath.Join(dir, path), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a", "y"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want int64
	}{{dir, 3210}, {filepath.Join(dir, "a"), 3200}} {
		if got, err := Bytes(tc.dir); err != nil || got != tc.want {
			t.Errorf("Bytes(%s) = %d, %v; want %d", tc.dir, got, err, tc.want)
		}
	}
	if _, err := Bytes(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing directory: %v, want not-exist", err)
	}
}
