//go:build linux

package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// target is one kind of output path: setup makes it in dir and returns the path to write and a
// function that returns what a reader of the target saw (for a FIFO, read concurrently).
type target struct {
	name     string
	setup    func(t *testing.T, dir string) (path string, read func() []byte)
	wantType fs.FileMode // type bits of the path after the write (Lstat)
	// realPath, if set, names the file whose content must be the output (a link's target).
	realPath string
}

func regularFile(content string, perm fs.FileMode) func(t *testing.T, dir string) (string, func() []byte) {
	return func(t *testing.T, dir string) (string, func() []byte) {
		p := filepath.Join(dir, "out.jsonl")
		if content != "" || perm != 0 {
			if err := os.WriteFile(p, []byte(content), perm); err != nil {
				t.Fatal(err)
			}
		}
		return p, func() []byte { return readFile(t, p) }
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fifo(t *testing.T, dir string) (string, func() []byte) {
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() { // the writer's open blocks until this reader opens the FIFO
		f, err := os.Open(p)
		if err != nil {
			got <- []byte("open: " + err.Error())
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
}

// charDevice makes a null device (major 1, minor 3) in dir; where mknod is not permitted it
// uses /dev/null itself, which is harmless to write to.
func charDevice(t *testing.T, dir string) (string, func() []byte) {
	p := filepath.Join(dir, "null")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("mknod: %v; using /dev/null", err)
		p = "/dev/null"
	}
	return p, func() []byte { return nil }
}

func symlinkTo(t *testing.T, dir string) (string, func() []byte) {
	real := filepath.Join(dir, "data", "real.jsonl")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink("data/real.jsonl", link); err != nil { // relative, as users make them
		t.Fatal(err)
	}
	return link, func() []byte { return readFile(t, real) }
}

func danglingSymlink(t *testing.T, dir string) (string, func() []byte) {
	real := filepath.Join(dir, "new.jsonl")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	return link, func() []byte { return readFile(t, real) }
}

func TestWriteTargets(t *testing.T) {
	const out = "line 1\nline 2\n"
	tests := []struct {
		target
		wantPerm fs.FileMode // checked on the real file when not 0
	}{
		{target: target{name: "missing", setup: regularFile("", 0), wantType: 0}, wantPerm: 0o644},
		{target: target{name: "regular", setup: regularFile("old content that is longer\n", 0o600), wantType: 0}, wantPerm: 0o600},
		{target: target{name: "fifo", setup: fifo, wantType: fs.ModeNamedPipe}},
		{target: target{name: "char device", setup: charDevice, wantType: fs.ModeDevice | fs.ModeCharDevice}},
		{target: target{name: "symlink", setup: symlinkTo, wantType: fs.ModeSymlink, realPath: "data/real.jsonl"}, wantPerm: 0o640},
		{target: target{name: "dangling symlink", setup: danglingSymlink, wantType: fs.ModeSymlink, realPath: "new.jsonl"}, wantPerm: 0o644},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, read := tc.setup(t, dir)
			if err := WriteFile(path, []byte(out), Options{}); err != nil {
				t.Fatal(err)
			}
			got := read()
			if tc.wantType&fs.ModeDevice == 0 && string(got) != out {
				t.Errorf("read %q, want %q", got, out)
			}
			info, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if typ := info.Mode().Type(); typ != tc.wantType {
				t.Errorf("%s is now %v, want type %v", path, typ, tc.wantType)
			}
			if tc.wantPerm != 0 {
				real := path
				if tc.realPath != "" {
					real = filepath.Join(dir, tc.realPath)
				}
				ri, err := os.Stat(real)
				if err != nil {
					t.Fatal(err)
				}
				if ri.Mode() != tc.wantPerm {
					t.Errorf("%s has mode %v, want %v", real, ri.Mode(), tc.wantPerm)
				}
			}
			assertNoTemp(t, dir)
		})
	}
}

// assertNoTemp fails if a temporary file is left anywhere under dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteFailureKeepsTarget(t *testing.T) {
	boom := errors.New("query 7 failed")
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (string, func() []byte)
		want  string // content after the failed write
	}{
		{"regular", regularFile("previous run\n", 0o644), "previous run\n"},
		{"symlink", symlinkTo, "old\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, read := tc.setup(t, dir)
			err := Write(path, Options{}, func(w io.Writer) error {
				io.WriteString(w, strings.Repeat("partial ", 1<<14)) // more than the buffer
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v, want %v", err, boom)
			}
			if got := string(read()); got != tc.want {
				t.Errorf("target now holds %.40q, want %q", got, tc.want)
			}
			assertNoTemp(t, dir)
		})
	}
}

func TestWriteMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "no", "such", "out.jsonl")
	err := WriteFile(path, []byte("x"), Options{})
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, path)
	}
}

func TestWriteDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(dir, []byte("x"), Options{})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want an error naming %s", err, dir)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatalf("%s is no longer a directory: %v %v", dir, info, err)
	}
}

func TestWriteStdout(t *testing.T) {
	var buf bytes.Buffer
	dir := t.TempDir()
	t.Chdir(dir)
	if err := WriteFile("-", []byte("to stdout\n"), Options{Stdout: &buf}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "to stdout\n" {
		t.Errorf("stdout got %q", buf.String())
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file named - was created: %v", err)
	}
}

func TestSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.Symlink(b, a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, b); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(a, []byte("x"), Options{}); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Fatalf("err = %v, want a symbolic link loop error", err)
	}
}
