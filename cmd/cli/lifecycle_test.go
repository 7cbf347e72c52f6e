package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// The lifecycle commands end to end on the COVID FAQ: an update from an edited copy, a delete
// by id, a compaction, and verify after each; search never returns a deleted passage.
func TestUpdateDeleteCompactCLI(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "idx")
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", faq, "--index", dir, "--source", "faq"); err != nil {
		t.Fatal(err)
	}
	// Newer revision: one answer edited ("COVID-19" -> "Kairosvirus disease" once in the file).
	b, err := os.ReadFile(faq)
	if err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(tmp, "faq-newer.csv")
	if err := os.WriteFile(newer, []byte(strings.Replace(string(b), "COVID-19", "Kairosvirus disease", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "index", "--update", "--delete-missing", "--input", newer, "--index", dir, "--source", "faq")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"added       0 documents", "changed     1 document", "unchanged   212 documents", "deleted     0 documents", "(0 embedded)"} {
		if !strings.Contains(out, want) {
			t.Errorf("update summary lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := runCLI(t, "verify", "--index", dir); err != nil {
		t.Fatalf("verify after update: %v", err)
	}
	out, _, err = runCLI(t, "search", "--index", dir, "-k", "1", "--json", "Kairosvirus")
	if err != nil || !strings.Contains(out, "Kairosvirus disease") {
		t.Fatalf("search for the edit: %v\n%s", err, out)
	}

	out, _, err = runCLI(t, "delete", "--index", dir, "--compact-ratio", "-1", "--doc-id", "1", "--doc-id", "nope")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "deleted     1 document") || !strings.Contains(out, "not found   1 document id: nope") {
		t.Errorf("delete summary:\n%s", out)
	}
	if out, _, err := runCLI(t, "stats", "--index", dir); err != nil || !strings.Contains(out, "deleted     ") {
		t.Errorf("stats after delete: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "compact", "--index", dir)
	if err != nil || !strings.Contains(out, "compacted   yes") || !strings.Contains(out, "documents   212") {
		t.Fatalf("compact: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "verify", "--index", dir); err != nil {
		t.Fatalf("verify after compact: %v", err)
	}
	if _, _, err := runCLI(t, "index", "--delete-missing", "--input", newer, "--index", dir); err == nil {
		t.Error("--delete-missing without --update accepted")
	}
}

func TestResumeCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	faq := coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	// Nothing to resume: a clean build, checkpointing as it goes (none are left afterwards).
	out, _, err := runCLI(t, "index", "--resume", "--checkpoint-every", "50", "--checkpoint-after", "0", "--batch", "20", "--input", faq, "--index", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "documents   213") || !strings.Contains(out, "checkpoints ") || !strings.Contains(out, "had no checkpoint") {
		t.Errorf("resume without a checkpoint:\n%s", out)
	}
	out, _, err = runCLI(t, "verify", "--index", dir)
	if err != nil || strings.Contains(out, "checkpoint  ") {
		t.Errorf("verify: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "index", "--update", "--resume", "--input", faq, "--index", dir); err == nil {
		t.Error("--update with --resume accepted")
	}
}

// An inverted file an older version wrote, without refinement codes: stats says it is
// outdated and what fixes it, compact writes it again with them though nothing was deleted,
// and stats then says nothing. One built without them on purpose (--ivf-no-refine) is not
// outdated, and compact leaves it.
func TestCompactOutdatedCLI(t *testing.T) {
	dir := t.TempDir()
	model, corpus, idx := filepath.Join(dir, "topics"), filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "ix")
	for _, args := range [][]string{
		{"bench", "corpus", "--passages", "1000", "--out", corpus, "--topics", "20", "--topic-model", model, "--topic-dim", "32", "--shared", coreShared(t, ".")},
		{"index", "--quiet", "--input", corpus, "--model", model, "--vector-index", "ivf", "--ivf-no-refine", "--index", idx},
	} {
		if out, errOut, err := runCLI(t, args...); err != nil {
			t.Fatalf("%q: %v\n%s%s", args, err, out, errOut)
		}
	}
	stats := func() string {
		t.Helper()
		out, errOut, err := runCLI(t, "stats", "--index", idx)
		if err != nil {
			t.Fatalf("stats: %v\n%s", err, errOut)
		}
		return out
	}
	if out := stats(); strings.Contains(out, "outdated") || !strings.Contains(out, "rescore=320 no-refine") {
		t.Errorf("stats of an index built with --ivf-no-refine:\n%s", out)
	}
	if out, _, err := runCLI(t, "compact", "--index", idx); err != nil || strings.Contains(out, "compacted   yes") {
		t.Errorf("compact of an index built with --ivf-no-refine: %v\n%s", err, out)
	}
	gen, err := manifest.Current(idx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	m.Dense.IVF.NoRefine = false // as a version before refinement codes recorded it
	if err := manifest.Write(gen, m); err != nil {
		t.Fatal(err)
	}
	if out := stats(); !strings.Contains(out, "outdated    an inverted file without refinement codes") || !strings.Contains(out, "kairos compact --index "+idx) {
		t.Errorf("stats of an older version's inverted file:\n%s", out)
	}
	out, _, err := runCLI(t, "compact", "--index", idx)
	if err != nil || !strings.Contains(out, "compacted   yes") || !strings.Contains(out, "upgraded    written again") {
		t.Fatalf("compact of an older version's inverted file: %v\n%s", err, out)
	}
	if out := stats(); strings.Contains(out, "outdated") || strings.Contains(out, "no-refine") {
		t.Errorf("stats after compact:\n%s", out)
	}
	if _, _, err := runCLI(t, "verify", "--index", idx); err != nil {
		t.Fatalf("verify after compact: %v", err)
	}
}
