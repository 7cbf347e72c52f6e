package cli

import (
	"bytes"
	"compress/bzip2"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus/multistream"
)

// TestPassagesWorkersAgree: `kairos passages` writes the same passages, in the same order,
// with one worker and with several, from a multistream dump found by scanning, from the same
// dump with its index, and from the single-stream sample.
func TestPassagesWorkersAgree(t *testing.T) {
	sample := coreShared(t, "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	dump := filepath.Join(dir, "sample-multistream.xml.bz2")
	index := filepath.Join(dir, "index.txt")
	var out, idx bytes.Buffer
	if err := multistream.Write(context.Background(), &out, &idx, bzip2.NewReader(f), multistream.WriteOptions{PagesPerStream: 20}); err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(dump, out.Bytes(), 0o644) != nil || os.WriteFile(index, idx.Bytes(), 0o644) != nil {
		t.Fatal("writing the multistream dump")
	}
	var want string
	for _, args := range [][]string{
		{sample, "--workers", "1"},
		{sample},
		{dump, "--workers", "1"},
		{dump, "--workers", "3"},
		{dump, "--workers", "2", "--multistream-index", index},
	} {
		stdout, stderr, err := runCLI(t, append([]string{"passages", "--source", "s"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if n := strings.Count(stdout, "\n"); n < 5000 {
			t.Fatalf("%v: %d passages", args, n)
		}
		if want == "" {
			want = stdout
		} else if stdout != want {
			t.Errorf("%v: passages differ from the first run's", args)
		}
	}
	_, _, err = runCLI(t, "passages", dump, "--workers", "-1")
	if err == nil || !strings.Contains(err.Error(), "--workers -1: want 0") {
		t.Errorf("negative --workers: %v", err)
	}
}

// The input flags reach the readers: FAQ columns by other names (the reader's refusal names
// the flags), and the record cap.
func TestPassagesInputFlags(t *testing.T) {
	dir := t.TempDir()
	faq := filepath.Join(dir, "faq.csv")
	if err := os.WriteFile(faq, []byte("Q,A\nWhat is covid?,A disease caused by a virus.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "passages", faq); err == nil || !strings.Contains(err.Error(), "--faq-question") {
		t.Errorf("FAQ without its columns: %v, want the flags named", err)
	}
	out, errOut, err := runCLI(t, "passages", "--faq-question", "Q", "--faq-answer", "A", faq)
	if err != nil || !strings.Contains(out, "A disease caused by a virus.") {
		t.Errorf("FAQ with --faq-question and --faq-answer: %v %s %s", err, out, errOut)
	}
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, []byte(`{"id":"a","title":"T","text":"`+strings.Repeat("x ", 200)+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "passages", "--max-record-bytes", "100", big); err == nil || !strings.Contains(err.Error(), "cap of 100 bytes") {
		t.Errorf("a record over --max-record-bytes: %v", err)
	}
}
