package indexer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Records without ids are numbered per file. With several inputs the numbers are prefixed with
// the input's source name ("b:1"), so unrelated documents never share an id; where two inputs
// have the same source name they still would, and a build must refuse instead of merging them.
// An explicit id repeated across inputs (a file given twice) is refused too: merged, its
// records' passages shared passage ids.
func TestRecordNumberIDsDoNotMergeAcrossInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noIDs1 := write("a.jsonl", `{"title": "Apples", "text": "Apples grow on trees."}`+"\n"+`{"title": "Pears", "text": "Pears are sweet."}`+"\n")
	noIDs2 := write("b.jsonl", `{"title": "Bees", "text": "Bees make honey."}`+"\n")
	withIDs := write("c.jsonl", `{"id": "1", "title": "Cats", "text": "Cats purr."}`+"\n")
	otherIDs := write("d.jsonl", `{"id": "cat-1", "title": "Dogs", "text": "Dogs bark."}`+"\n")
	sameName := filepath.Join(dir, "other", "a.jsonl")
	if err := os.MkdirAll(filepath.Dir(sameName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sameName, []byte(`{"title": "Plums", "text": "Plums are purple."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repeated := write("e.jsonl", `{"id": "x", "title": "Part", "text": "First part."}`+"\n")
	repeated2 := write("f.jsonl", `{"id": "x", "title": "Part", "text": "Second part."}`+"\n")
	tests := []struct {
		name   string
		inputs []string
		want   string // error text; "" for success
		docs   int
		ids    []string // some of the document ids
	}{
		{"one file without ids", []string{noIDs1}, "", 2, []string{"1", "2"}},
		{"two files without ids", []string{noIDs1, noIDs2}, "", 3, []string{"a:1", "a:2", "b:1"}},
		{"two files without ids, one source name", []string{noIDs1, sameName}, `document id "a:1" appears in ` + noIDs1 + ` (a record without an id, numbered 1) and in ` + sameName + ` (a record without an id, numbered 1)`, 0, nil},
		{"numbered record meets an explicit id", []string{withIDs, noIDs2}, "", 2, []string{"1", "b:1"}},
		{"explicit ids only", []string{otherIDs, noIDs2}, "", 2, []string{"cat-1", "b:1"}},
		{"an explicit id repeated across files", []string{repeated, repeated2}, `document id "x" appears in ` + repeated + ` (a document with that id) and in ` + repeated2 + ` (a document with that id): an id must be unique across the inputs`, 0, nil},
		{"a file given twice", []string{otherIDs, otherIDs}, `document id "cat-1" appears in ` + otherIDs + ` (a document with that id) and in ` + otherIDs, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Dir: filepath.Join(t.TempDir(), "idx")}
			for _, in := range tc.inputs {
				opts.Inputs = append(opts.Inputs, InputSpec{Path: in})
			}
			_, err := Build(context.Background(), opts)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				if _, cerr := manifest.Current(opts.Dir); cerr == nil {
					t.Error("a refused build committed a generation")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			docs := openDocs(t, opts.Dir)
			if len(docs) != tc.docs {
				t.Errorf("document table holds %d documents, want %d", len(docs), tc.docs)
			}
			for _, id := range tc.ids {
				if docs[id] == nil {
					t.Errorf("no document %q", id)
				}
			}
		})
	}
}

// openDocs returns the live generation's document ids.
func openDocs(t *testing.T, dir string) map[string]*doctable.Entry {
	t.Helper()
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	docs, err := doctable.Read(filepath.Join(g.Dir, doctable.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}
