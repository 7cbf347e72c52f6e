package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// A build into a directory that holds an index refuses unless told whether to update or replace.
func TestIndexRefusesToReplaceSilently(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	in := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", dir); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "index", "--quiet", "--input", in, "--index", dir)
	if err == nil || !strings.Contains(err.Error(), "already holds an index (generation 1,") ||
		!strings.Contains(err.Error(), "--update") || !strings.Contains(err.Error(), "--force") || ExitCode(err) != 1 {
		t.Fatalf("second build: err %v, want a refusal naming --update and --force", err)
	}
	cur, err := manifest.Current(dir)
	if err != nil || filepath.Base(cur) != "g-000001" {
		t.Fatalf("after the refusal the live generation is %q (%v), want g-000001", cur, err)
	}
	if _, _, err := runCLI(t, "index", "--quiet", "--force", "--input", in, "--index", dir); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if cur, _ := manifest.Current(dir); filepath.Base(cur) != "g-000002" {
		t.Errorf("--force: live generation %q, want g-000002", cur)
	}
}
