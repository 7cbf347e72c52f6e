//go:build linux

package cli

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOutWritesThroughSpecialFiles runs `search --batch --out` against outputs that a rename
// would destroy: a FIFO (read while kairos writes), a symbolic link and a character device. Each
// must receive the same run as a regular file, and keep its type.
func TestOutWritesThroughSpecialFiles(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	dump := coreShared(t, "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", dump, "--index", idx); err != nil {
		t.Fatal(err)
	}
	queries := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(queries, []byte(`{"_id": "q1", "text": "Gershwin jazz symphonic poem"}
{"_id": "q2", "text": "albedo of fresh snow"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	search := func(out string) error {
		_, _, err := runCLI(t, "search", "--index", idx, "--batch", queries, "--out", out, "-k", "3")
		return err
	}
	ref := filepath.Join(t.TempDir(), "ref.jsonl")
	if err := search(ref); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	if err != nil || len(want) == 0 {
		t.Fatalf("reference run: %d bytes, %v", len(want), err)
	}

	tests := []struct {
		name     string
		setup    func(t *testing.T, dir string) (out string, read func() []byte)
		wantType fs.FileMode
	}{
		{"fifo", func(t *testing.T, dir string) (string, func() []byte) {
			p := filepath.Join(dir, "run.fifo")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			got := make(chan []byte, 1)
			go func() {
				f, err := os.Open(p) // blocks until kairos opens the FIFO for writing
				if err != nil {
					got <- []byte(err.Error())
					return
				}
				defer f.Close()
				b, _ := io.ReadAll(f)
				got <- b
			}()
			return p, func() []byte {
				select {
				case b := <-got:
					return b
				case <-time.After(20 * time.Second): // a replaced FIFO never gets a writer
					t.Fatalf("nothing was written to the FIFO %s", p)
					return nil
				}
			}
		}, fs.ModeNamedPipe},
		{"symlink", func(t *testing.T, dir string) (string, func() []byte) {
			real := filepath.Join(dir, "runs", "run.jsonl")
			if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(real, []byte("previous run\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "latest.jsonl")
			if err := os.Symlink("runs/run.jsonl", link); err != nil {
				t.Fatal(err)
			}
			return link, func() []byte { b, _ := os.ReadFile(real); return b }
		}, fs.ModeSymlink},
		{"char device", func(t *testing.T, dir string) (string, func() []byte) {
			p := filepath.Join(dir, "null")
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Logf("mknod: %v; using /dev/null", err)
				p = "/dev/null"
			}
			return p, nil
		}, fs.ModeDevice | fs.ModeCharDevice},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, read := tc.setup(t, t.TempDir())
			if err := search(out); err != nil {
				t.Fatal(err)
			}
			if read != nil {
				if got := read(); string(got) != string(want) {
					t.Errorf("%s received %d bytes, want the %d of the regular run:\n%.200s", out, len(got), len(want), got)
				}
			}
			info, err := os.Lstat(out)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Type() != tc.wantType {
				t.Errorf("%s is now %v, want type %v", out, info.Mode().Type(), tc.wantType)
			}
		})
	}
}
