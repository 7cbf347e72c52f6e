package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kairos index --update of a dense index finds the index's model without --model, as search
// does, and embeds the new passages with it; with the model gone, the refusal says where it
// looked.
func TestIndexUpdateFindsTheIndexModel(t *testing.T) {
	work := t.TempDir()
	model := filepath.Join(work, "m2v")
	if err := os.CopyFS(model, os.DirFS(coreShared(t, "models/synthetic/static-model2vec"))); err != nil {
		t.Fatal(err)
	}
	first, more := filepath.Join(work, "sf.jsonl"), filepath.Join(work, "sf-more.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), first, 100)
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), more, 130)
	idx := filepath.Join(work, "idx")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", first, "--index", idx, "--model", model); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	cache := filepath.Join(work, "cache") // empty: only the recorded folder can be found
	out, stderr, err := runCLI(t, "index", "--update", "--models-dir", cache, "--input", more, "--index", idx)
	if err != nil {
		t.Fatalf("update without --model: %v\n%s", err, stderr)
	}
	if want := "kairos: no --model: using " + model + " (m2v), the folder the index was built with\n"; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr does not start %q:\n%s", want, stderr)
	}
	if !strings.Contains(out, "added       30 documents\n") || !strings.Contains(out, " embedded), 0 passages tombstoned") {
		t.Errorf("update summary:\n%s", out)
	}
	stats, _, err := runCLI(t, "stats", "--index", idx, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Passages int `json:"passages"`
		Encoder  struct {
			Vectors int `json:"vectors"`
		} `json:"encoder"`
	}
	if err := json.Unmarshal([]byte(stats), &st); err != nil || st.Passages == 0 || st.Encoder.Vectors != st.Passages {
		t.Errorf("after the update: %d passages, %d vectors (%v)\n%s", st.Passages, st.Encoder.Vectors, err, stats)
	}

	// The model gone: the update that needs it says so, and what to pass.
	if err := os.RemoveAll(model); err != nil {
		t.Fatal(err)
	}
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), more, 140)
	_, stderr, err = runCLI(t, "index", "--update", "--models-dir", cache, "--input", more, "--index", idx)
	want := "new passages need its encoder (--model); without it none was found: m2v (its model folder " + model + " is gone); no model in " + cache + " has its "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("update with the model gone: %v\nwant %q\n%s", err, want, stderr)
	}
}

// A document keeps the source it was first indexed under when an update replaces it, though
// the newer input's file name (the default source) differs: a --source filter still finds
// it. New documents take their input's name, and the update says so with the flag that
// files them under the index's; --source given names every document it writes.
func TestUpdateKeepsSources(t *testing.T) {
	work := t.TempDir()
	src := coreShared(t, "data/beir-scifact/corpus.jsonl")
	first := filepath.Join(work, "sf300.jsonl")
	writeHead(t, src, first, 30)
	idx := filepath.Join(work, "idx")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", first, "--index", idx); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// sf300b: the same 30 documents, the 5th changed, and 10 new ones.
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")[:40]
	var changed struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal([]byte(lines[4]), &changed); err != nil {
		t.Fatal(err)
	}
	lines[4] = strings.Replace(lines[4], `"text": "`, `"text": "Quixotic zebrafish marmalade. `, 1)
	newer := filepath.Join(work, "sf300b.jsonl")
	if err := os.WriteFile(newer, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCLI(t, "index", "--update", "--input", newer, "--index", idx)
	if err != nil || !strings.Contains(out, "added       10 documents\nchanged     1 document\n") {
		t.Fatalf("update: %v\n%s%s", err, out, stderr)
	}
	if want := `kairos: note: new documents of ` + newer + ` go under source "sf300b", which the index does not have (it has sf300); documents it replaces keep theirs; --source sf300 files the new ones under the same`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	hitsOf := func(source string) []string {
		t.Helper()
		out, stderr, err := runCLI(t, "search", "--index", idx, "--source", source, "-k", "3", "--json", "quixotic zebrafish marmalade")
		if err != nil {
			t.Fatalf("search --source %s: %v\n%s", source, err, stderr)
		}
		var r struct {
			Hits []struct {
				DocID  string `json:"doc_id"`
				Source string `json:"source"`
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range r.Hits {
			if h.Source != source {
				t.Errorf("--source %s returned a hit from %s", source, h.Source)
			}
			ids = append(ids, h.DocID)
		}
		return ids
	}
	if ids := hitsOf("sf300"); len(ids) == 0 || ids[0] != changed.ID {
		t.Errorf("--source sf300: %v, want the changed document %s first", ids, changed.ID)
	}
	stats, _, err := runCLI(t, "stats", "--index", idx)
	if err != nil || !strings.Contains(stats, "source      sf300: ") || !strings.Contains(stats, "source      sf300b: ") {
		t.Errorf("stats: %v\n%s", err, stats)
	}

	// --source names the documents an update writes, changed ones included.
	lines[4] = strings.Replace(lines[4], "Quixotic zebrafish marmalade. ", "Quixotic zebrafish marmalade, again. ", 1)
	if err := os.WriteFile(newer, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runCLI(t, "index", "--update", "--source", "scifact", "--input", newer, "--index", idx); err != nil || strings.Contains(stderr, "note:") {
		t.Fatalf("update --source: %v\n%s", err, stderr)
	}
	if ids := hitsOf("scifact"); len(ids) == 0 || ids[0] != changed.ID {
		t.Errorf("--source scifact: %v, want the changed document %s first", ids, changed.ID)
	}
}
