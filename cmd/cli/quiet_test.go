package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --quiet prints nothing on success but what the person must know: the malformed records
// --skip-bad skipped, on stderr.
func TestIndexQuietPrintsOnlyWarnings(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), in, 40)
	out, stderr, err := runCLI(t, "index", "--quiet", "--input", in, "--index", filepath.Join(dir, "a.idx"))
	if err != nil || out != "" || stderr != "" {
		t.Errorf("index --quiet: %v\nstdout %q\nstderr %q", err, out, stderr)
	}
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"_id\": \"bad\", \"text\": \n")
	f.Close()
	for _, args := range [][]string{
		{"index", "--quiet", "--skip-bad", "--input", in, "--index", filepath.Join(dir, "b.idx")},
		{"index", "--quiet", "--skip-bad", "--update", "--input", in, "--index", filepath.Join(dir, "a.idx")},
	} {
		out, stderr, err = runCLI(t, args...)
		want := "kairos: warning: skipped 1 malformed record (--skip-bad):\n  " + in + ": line 41: "
		if err != nil || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 2 {
			t.Errorf("%v: %v\nstdout %q\nstderr %q\nwant stderr to start %q, two lines", args, err, out, stderr, want)
		}
	}
	// Without --quiet, the summary and the progress line, which counts in words.
	out, stderr, err = runCLI(t, "index", "--input", in, "--index", filepath.Join(dir, "c.idx"), "--skip-bad")
	if err != nil || !strings.Contains(out, "documents   40\n") || !strings.Contains(out, "bad         1 malformed records skipped\n") ||
		!strings.Contains(stderr, "read 40 documents (100% of input)") {
		t.Errorf("index: %v\nstdout %s\nstderr %s", err, out, stderr)
	}
}

// kairos passages ends each input with its counts in words, the zero ones left out and the
// skipped ones by reason, and the languages of an input that holds several.
func TestPassagesCounts(t *testing.T) {
	dump := coreShared(t, "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	mixed := coreShared(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson")
	one := filepath.Join(t.TempDir(), "one.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), one, 1)
	tests := []struct {
		input string
		want  string
	}{
		{dump, dump + ": 106 documents, 5601 passages, skipped 1 namespace, 99 redirect\n"},
		{one, one + ": 1 document, 4 passages\n"},
		// kairos index refuses an input in several languages without --language: said here too.
		{mixed, mixed + ": 3 documents, 43 passages\n" + mixed + ": documents in 3 languages (de 1, en 1, ru 1): " +
			"kairos index needs --language multilingual to analyse each in its own, or --language CODE to analyse all as one\n"},
	}
	for _, tc := range tests {
		out, stderr, err := runCLI(t, "passages", "--input", tc.input)
		if err != nil || out == "" || stderr != tc.want {
			t.Errorf("passages %s: %v\nstderr %q\nwant   %q", filepath.Base(tc.input), err, stderr, tc.want)
		}
	}
}
