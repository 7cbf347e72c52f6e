package indexer

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKnownSumsFollowTheFile: a known file's sum is found under a new name (a renamed
// checkpoint segment), and not for a new file of the same name and size, nor for the same
// file once it has grown.
func TestKnownSumsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seg-a.kpo")
	if err := os.WriteFile(path, []byte("postings"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := fileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	known := knownSums{{info: info, sum: sum}}
	stat := func(p string) os.FileInfo {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	renamed := filepath.Join(dir, "part-000001")
	if err := os.Rename(path, renamed); err != nil {
		t.Fatal(err)
	}
	if got, ok := known.lookup(stat(renamed)); !ok || got != sum {
		t.Fatalf("renamed file: %v %v, want the known sum", got, ok)
	}
	// another file under the old name, same size: not the known one
	if err := os.WriteFile(path, []byte("POSTINGS"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := known.lookup(stat(path)); ok {
		t.Fatalf("new file of the same name and size: known as %v", got)
	}
	// the known file, grown
	f, err := os.OpenFile(renamed, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("+")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, ok := known.lookup(stat(renamed)); ok {
		t.Fatalf("grown file: known as %v", got)
	}
}
