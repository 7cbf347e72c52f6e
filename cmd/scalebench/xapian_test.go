package scalebench

import (
	"os"
	"path/filepath"
	"testing"
)

// The anchor's note says why it cannot run in words: the last line of Python's traceback, or
// the error of running a python that is not there.
func TestXapianAvailableSaysWhy(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "python3")
	script := "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\necho '  File \"<string>\", line 1, in <module>' >&2\necho \"ModuleNotFoundError: No module named 'xapian'\" >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nopython")
	for _, tc := range []struct{ python, want string }{
		{fake, fake + " cannot import xapian (ModuleNotFoundError: No module named 'xapian'): install Debian's python3-xapian, or pass --python"},
		{missing, missing + " cannot import xapian (fork/exec " + missing + ": no such file or directory): install Debian's python3-xapian, or pass --python"},
	} {
		if got := xapianAvailable(t.Context(), tc.python); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.python, got, tc.want)
		}
	}
}
