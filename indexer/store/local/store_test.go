package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A CURRENT or CHECKPOINT that cannot be read is an error, not "no index" or "no
// checkpoint": read so, it let a build's first checkpoint drop the generation CURRENT named.
// A file that is a directory stands in for a failing disk (root reads any permission).
func TestUnreadablePointersKeepGenerations(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		make      func(dir string) error
		liveErr   bool
		live      int
		dropErr   bool
		dropsGen1 bool
	}{
		{"no index", func(dir string) error { return nil }, false, 0, false, true},
		{"a live generation", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("g-000002\n"), 0o644)
		}, false, 2, false, true},
		{"a CURRENT that cannot be read", func(dir string) error { return os.Mkdir(filepath.Join(dir, "CURRENT"), 0o755) }, true, 0, false, true},
		{"a CURRENT naming a missing generation", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("g-000009\n"), 0o644)
		}, false, 0, false, true},
		{"a CHECKPOINT that cannot be read", func(dir string) error { return os.Mkdir(filepath.Join(dir, "CHECKPOINT"), 0o755) }, false, 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, g := range []string{"g-000001", "g-000002", "g-000003.tmp"} {
				if err := os.Mkdir(filepath.Join(dir, g), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.make(dir); err != nil {
				t.Fatal(err)
			}
			s := New(dir)
			n, err := s.Live(ctx)
			if (err != nil) != tc.liveErr || n != tc.live {
				t.Errorf("Live: %d, %v; want %d, error %v", n, err, tc.live, tc.liveErr)
			}
			err = s.Drop(ctx, 2)
			if (err != nil) != tc.dropErr {
				t.Errorf("Drop: %v; want error %v", err, tc.dropErr)
			}
			_, statErr := os.Stat(filepath.Join(dir, "g-000001"))
			if dropped := os.IsNotExist(statErr); dropped != tc.dropsGen1 {
				t.Errorf("g-000001 dropped %v, want %v", dropped, tc.dropsGen1)
			}
			if _, err := os.Stat(filepath.Join(dir, "g-000002")); err != nil {
				t.Errorf("the kept generation: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "g-000003.tmp")); !os.IsNotExist(err) {
				t.Errorf("an unfinished writer's directory was left: %v", err)
			}
		})
	}
}
