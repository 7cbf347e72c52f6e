package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bench corpus --format mediawiki writes a multistream dump and its index, which kairos index
// reads back as the passages asked for, its summary giving each stage of the dump path a
// busy time and a rate.
func TestBenchCorpusMediaWikiIndex(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "synth-multistream.xml.bz2")
	out, _, err := runCLI(t, "bench", "corpus", "--format", "mediawiki", "--passages", "500", "--out", dump, "--shared", coreShared(t, "."))
	if err != nil || !strings.Contains(out, "wrote 500 passages") {
		t.Fatalf("bench corpus: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "synth-multistream-index.txt.bz2")); err != nil {
		t.Errorf("no index beside the dump: %v", err)
	}
	out, errOut, err := runCLI(t, "index", "--input", dump, "--index", filepath.Join(dir, "idx"))
	if err != nil {
		t.Fatalf("index: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "passages    500\n") {
		t.Errorf("summary lacks the 500 passages generated:\n%s", out)
	}
	for _, stage := range []string{`decompress +[0-9.]+ s +[0-9.]+ MB/s of text`, `parse\+clean +[0-9.]+ s +[0-9]+ pages/s`,
		`split +[0-9.]+ s +[0-9]+ passages/s`, `index +[0-9.]+ s +[0-9]+ passages/s`} {
		if !regexp.MustCompile(`\n  ` + stage + ` +[0-9.]+\n`).MatchString(out) {
			t.Errorf("summary lacks a line matching %q:\n%s", stage, out)
		}
	}
}
