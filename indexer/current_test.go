package indexer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// TestCurrentNamesAMissingGeneration: a CURRENT naming a generation that is not there (or
// no generation at all) is reported as damage of CURRENT, the file that is wrong, by every
// way in: Current, Open, Verify, an update and a compaction.
func TestCurrentNamesAMissingGeneration(t *testing.T) {
	in := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"a","title":"Albedo","text":"Fresh snow reflects sunlight."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ current, want string }{
		{"g-000009\n", "names generation g-000009, which does not exist"},
		{"manifest.json\n", `names "manifest.json", not a generation`},
	} {
		dir := filepath.Join(t.TempDir(), "idx")
		build(t, dir, in)
		cur := filepath.Join(dir, manifest.CurrentFileName)
		if err := os.WriteFile(cur, []byte(tc.current), 0o644); err != nil {
			t.Fatal(err)
		}
		check := func(what string, err error) {
			t.Helper()
			var de *DamagedError
			if !errors.As(err, &de) || de.Path != cur || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CURRENT %q: %s: %v, want damage of %s: %s", strings.TrimSpace(tc.current), what, err, cur, tc.want)
			}
		}
		_, err := manifest.Current(dir)
		check("Current", err)
		_, err = openDir(dir)
		check("Open", err)
		_, err = verifyIndex(ctx, dir)
		check("Verify", err)
		_, err = updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: in}}}})
		check("Update", err)
		_, err = compactIndex(ctx, dir, nil)
		check("Compact", err)
	}
}
