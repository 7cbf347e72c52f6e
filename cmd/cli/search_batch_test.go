package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/rerank/request"
)

// TestReadQueriesKeepsTheTemplate: a batch line's own k or min_score applies to that line
// alone; the lines after it get the command line's (the template's), which stays unchanged.
func TestReadQueriesKeepsTheTemplate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	lines := `{"id":"1","text":"a","min_score":3,"k":7}` + "\n" + `{"id":"2","text":"b"}` + "\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	half := 0.5
	tmpl := request.Query{K: request.Int(5), MinScore: &half}
	qs, err := readQueries(path, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || *qs[0].MinScore != 3 || *qs[0].K != 7 || *qs[1].MinScore != 0.5 || *qs[1].K != 5 {
		t.Fatalf("queries %+v %+v", qs[0].Query, qs[1].Query)
	}
	if half != 0.5 || *tmpl.K != 5 {
		t.Errorf("the template changed: min_score %v, k %d", half, *tmpl.K)
	}
}
