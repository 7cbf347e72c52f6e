package scalebench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealPassagesFailureSaysWhy: when `kairos passages` fails (a disk that fills while the
// anchor's passages are written), its own message reaches the bench's progress, not only
// "exit status 1".
func TestRealPassagesFailureSaysWhy(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "kairos")
	script := "#!/bin/sh\necho '{\"id\":\"1#0\"}'\necho 'kairos: writing passages: no space left on device' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	err := writeRealPassages(t.Context(), fake, "in.jsonl", filepath.Join(dir, "passages.jsonl"), &progress)
	if err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("error %v, want the child's exit", err)
	}
	if !strings.Contains(progress.String(), "no space left on device") {
		t.Fatalf("progress %q: the child's reason is lost", progress.String())
	}
}
