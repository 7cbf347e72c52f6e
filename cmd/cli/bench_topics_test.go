package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// bench corpus --topics --topic-model writes passages and a static model that carries their
// topics, and bench ann --topics measures the graph on that model's vectors of such passages,
// queried by passages of other documents.
func TestBenchCorpusTopicModel(t *testing.T) {
	dir := t.TempDir()
	model, corpus := filepath.Join(dir, "topics"), filepath.Join(dir, "c.jsonl")
	out, _, err := runCLI(t, "bench", "corpus", "--passages", "500", "--out", corpus, "--topics", "40",
		"--topic-model", model, "--topic-dim", "32", "--shared", coreShared(t, "."))
	if err != nil || !strings.Contains(out, "wrote a 40-topic static model") || !strings.Contains(out, "wrote 500 passages") {
		t.Fatalf("bench corpus: %v\n%s", err, out)
	}
	out, errOut, err := runCLI(t, "bench", "ann", "--n", "2000", "--model", model, "--topics", "40", "--queries", "50",
		"--ef", "64", "--efc", "100", "--repeat", "1", "--json", "--shared", coreShared(t, "."))
	if err != nil {
		t.Fatalf("bench ann: %v\n%s", err, errOut)
	}
	rows := parseANNRows(t, []byte(out))
	if len(rows) != 1 || *rows[0].Dim != 32 || *rows[0].N != 2000 || *rows[0].Recall < 0.9 {
		t.Fatalf("rows %s", out)
	}
}

func TestBenchTopicsUsage(t *testing.T) {
	shared := coreShared(t, ".")
	out := filepath.Join(t.TempDir(), "c")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "corpus", "--passages", "10", "--out", out, "--topic-model", out + "m", "--shared", shared}, "--topic-model needs --topics"},
		{[]string{"bench", "corpus", "--passages", "10", "--out", out, "--topics", "5", "--format", "mediawiki", "--shared", shared}, "only with --format jsonl"},
		{[]string{"bench", "corpus", "--passages", "10", "--out", out, "--topics", "-2", "--shared", shared}, "-2 topics"},
		{[]string{"bench", "ann", "--n", "10", "--topics", "5"}, "--topics 5: needs --model"},
	} {
		_, errOut, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error()+errOut, tc.want) {
			t.Errorf("%v: err = %v (%s), want %q", tc.args, err, errOut, tc.want)
		}
	}
}
