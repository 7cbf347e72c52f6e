package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDatasetTimeQAShared(t *testing.T) {
	sharedTimeQA := sharedtest.Path(t, "data/timeqa/human_annotated_train.json")
	dir := t.TempDir()
	corpusPath, queriesPath := filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "queries.jsonl")
	var stderr bytes.Buffer
	err := cmdDataset(context.Background(), []string{"timeqa", "--input", sharedTimeQA, "--corpus", corpusPath, "--queries", queriesPath}, IO{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	docs := readJSONL[timeQADoc](t, corpusPath)
	queries := readJSONL[timeQAQuery](t, queriesPath)
	// SOURCE.txt: 320 pages, 15,655 paragraphs, 1,171 questions; two pages are listed twice
	// (Newton D. Baker House, Chelyabinsk: 34 + 130 paragraphs pooled once).
	if got, want := len(queries), 1171; got != want {
		t.Errorf("%d queries, want %d", got, want)
	}
	if got, max := len(docs), 15655-34-130; got > max || got < max-200 {
		t.Errorf("%d documents, want just under %d (empty paragraphs skipped)", got, max)
	}
	ids := map[string]timeQADoc{}
	for _, d := range docs {
		if _, dup := ids[d.ID]; dup {
			t.Fatalf("duplicate document id %q", d.ID)
		}
		ids[d.ID] = d
	}
	first := docs[0]
	if first.ID != "Newton_D._Baker_House/p0" || first.Title != "Newton D. Baker House" {
		t.Errorf("first document = %+v", first)
	}
	q := queries[0]
	if q.Text != "Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?" || q.Time != "auto" ||
		len(q.Gold) != 1 || q.Gold[0] != "Newton_D._Baker_House/p18" || q.Split != "a" {
		t.Errorf("first query = %+v", q)
	}
	if g := ids[q.Gold[0]]; !strings.Contains(g.Text, "George Peter") {
		t.Errorf("gold paragraph of the first question does not hold its answer: %q", g.Text)
	}
	for _, q := range queries {
		for _, g := range q.Gold {
			if _, ok := ids[g]; !ok {
				t.Fatalf("query %s: gold %q is not a written document", q.ID, g)
			}
		}
	}
	if !strings.Contains(stderr.String(), "1171 of 1171 questions") {
		t.Errorf("summary: %s", stderr.String())
	}

	// The two halves partition the questions.
	var na, nb int
	for _, part := range []string{"a", "b"} {
		qp := filepath.Join(dir, "q-"+part+".jsonl")
		if err := cmdDataset(context.Background(), []string{"timeqa", "--input", sharedTimeQA, "--corpus", corpusPath, "--queries", qp, "--split", part}, IO{Stderr: &stderr}); err != nil {
			t.Fatal(err)
		}
		n := len(readJSONL[timeQAQuery](t, qp))
		if part == "a" {
			na = n
		} else {
			nb = n
		}
	}
	if na+nb != len(queries) || na < 400 || nb < 400 {
		t.Errorf("split sizes a=%d b=%d of %d", na, nb, len(queries))
	}
}

func TestDatasetTimeQAErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, input, want string
	}{
		{"not json", "{", "not a TimeQA page list"},
		{"gold out of range", `[{"index":"/wiki/X#P1","link":"/wiki/X","paras":["X","a"],"questions":[["q in 1990?",[{"para":5}]]]}]`,
			"page 0 (/wiki/X#P1) question 0 answer 0: gold paragraph out of range 0..1"},
		{"bad question", `[{"index":"/wiki/X#P1","link":"/wiki/X","paras":["X"],"questions":[["q"]]}]`,
			"page 0 (/wiki/X#P1) question 0: want [text, [{para, ...}]]"},
		{"no link", `[{"index":"i","paras":["X"],"questions":[]}]`, "page 0 (i): no link"},
	}
	for _, tc := range tests {
		in := write(tc.name+".json", tc.input)
		out := filepath.Join(dir, "c.jsonl")
		err := cmdDataset(context.Background(), []string{"timeqa", "--input", in, "--corpus", out, "--queries", filepath.Join(dir, "q.jsonl")}, IO{Stderr: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), in) {
			t.Errorf("%s: error %v, want it to name %q and the file", tc.name, err, tc.want)
		}
		if _, statErr := os.Stat(out); statErr == nil {
			t.Errorf("%s: corpus written despite the error", tc.name)
		}
	}
	for _, args := range [][]string{{}, {"squad"}, {"timeqa"}, {"timeqa", "--input", "x", "--corpus", "y", "--queries", "z", "--split", "c"}} {
		err := cmdDataset(context.Background(), args, IO{Stderr: &bytes.Buffer{}})
		if !errors.Is(err, ErrUsage) {
			t.Errorf("args %q: error %v, want a usage error", args, err)
		}
	}
}

func TestDatasetTimeQATitleAndDuplicates(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.json")
	page := `{"index":"/wiki/Caf%C3%A9_de_Flore#P1","link":"/wiki/Caf%C3%A9_de_Flore","paras":["Café de Flore","","It opened in 1887 ."],"questions":[["Who owned it in 1887?",[{"para":2},{"para":2}]]]}`
	if err := os.WriteFile(in, []byte("["+page+","+strings.Replace(page, "#P1", "#P2", 2)+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, q := filepath.Join(t.TempDir(), "c.jsonl"), filepath.Join(t.TempDir(), "q.jsonl")
	if err := cmdDataset(context.Background(), []string{"timeqa", "--input", in, "--corpus", c, "--queries", q}, IO{Stderr: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	docs := readJSONL[timeQADoc](t, c)
	if len(docs) != 2 || docs[1].Title != "Café de Flore" || docs[1].ID != "Caf%C3%A9_de_Flore/p2" {
		t.Errorf("docs = %+v (want the empty paragraph skipped and the duplicate page pooled once)", docs)
	}
	qs := readJSONL[timeQAQuery](t, q)
	if len(qs) != 2 || len(qs[0].Gold) != 1 || qs[1].Split != "b" {
		t.Errorf("queries = %+v", qs)
	}
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}
