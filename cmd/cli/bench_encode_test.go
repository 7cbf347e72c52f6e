package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// bench corpus writes passages kairos index reads, and bench encode measures every stage on
// them, with vectors that agree with a second encoder on the same device (cosine 1) and a
// cross-encoder rate.
func TestBenchCorpusAndEncode(t *testing.T) {
	requireORTLib(t)
	corpus := filepath.Join(t.TempDir(), "c.jsonl")
	out, _, err := runCLI(t, "bench", "corpus", "--passages", "300", "--out", corpus, "--shared", coreShared(t, "."))
	if err != nil || !strings.Contains(out, "wrote 300 passages") {
		t.Fatalf("bench corpus: %v\n%s", err, out)
	}
	texts, err := readPassageTexts(t.Context(), corpus, 0)
	if err != nil || len(texts) != 300 {
		t.Fatalf("reading the corpus back: %d passages, %v", len(texts), err)
	}
	cross := coreShared(t, "models/synthetic/tiny-cross-encoder")
	out, errOut, err := runCLI(t, "bench", "encode", "--model", tinyEncoder, "--input", corpus, "--limit", "200",
		"--compare-device", "cpu", "--compare-n", "50", "--cross-model", cross, "--cross-pairs", "100", "--json")
	if err != nil {
		t.Fatalf("bench encode: %v\n%s", err, errOut)
	}
	var got struct {
		Stages []encodeBenchRow `json:"stages"`
		Agree  *encodeAgreement `json:"agreement"`
		Cross  *encodeAgreement `json:"cross_agreement"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	stages := []string{"tokenize", "model", "pipelined", "cross@64"}
	if len(got.Stages) != len(stages) {
		t.Fatalf("stages %+v, want %v", got.Stages, stages)
	}
	for i, r := range got.Stages {
		wantTexts := 200
		if i == 3 {
			wantTexts = 100
		}
		if r.Stage != stages[i] || r.Texts != wantTexts || r.TextsPS <= 0 || (i < 3 && r.Tokens <= r.Texts) {
			t.Errorf("stage %d: %+v", i, r)
		}
	}
	if got.Agree == nil || got.Agree.Texts != 50 || got.Agree.MinCosine < 0.999999 {
		t.Errorf("agreement %+v, want 50 texts at cosine 1", got.Agree)
	}
	if got.Cross == nil || got.Cross.Texts < 50 || got.Cross.MaxAbsDiff != 0 {
		t.Errorf("cross agreement %+v, want identical scores on the same device", got.Cross)
	}
}
