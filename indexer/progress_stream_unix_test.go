//go:build unix

package indexer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
)

// A build with a stream among its inputs shows no share of the input and no ETA: the stream's
// size is unknown, and its bytes counted against the files' total showed 100% and an ETA of 0
// s while it was still being read.
func TestProgressWithAStreamShowsNoShare(t *testing.T) {
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.fifo")
	if err := os.WriteFile(file, []byte(`{"id":"a","title":"Apples","text":"Apples grow on trees."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for i := range 200 {
			f.WriteString(`{"id":"s` + string(rune('a'+i%26)) + strings.Repeat("x", i) + `","title":"Pears","text":"Pears grow on trees too."}` + "\n")
		}
	}()
	var log bytes.Buffer
	sum, err := Build(context.Background(), Options{Dir: filepath.Join(dir, "ix"), Inputs: []InputSpec{{Path: file}, {Path: fifo, Options: corpus.Options{Format: corpus.FormatJSONL}}}, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts.Documents != 201 {
		t.Fatalf("%d documents, want 201", sum.Counts.Documents)
	}
	if out := log.String(); !strings.Contains(out, "read 201 documents,") || strings.Contains(out, "% of input") || strings.Contains(out, "ETA") {
		t.Errorf("progress with a stream: %q; want the counts without a share or an ETA", out)
	}
}
