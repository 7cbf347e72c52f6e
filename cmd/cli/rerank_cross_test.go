package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/embed"
)

// kairos search --rerank cross with the tiny random-weight cross-encoder: the hits come back
// in the order of the cross-encoder's own scores, recomputed here independently. (Random
// weights: this checks plumbing, not quality.)
func TestSearchCrossRerank(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if _, _, err := runCLI(t, "index", "--quiet", "--input", coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv"), "--index", dir); err != nil {
		t.Fatal(err)
	}
	model := coreShared(t, "models/synthetic/tiny-cross-encoder")
	const q = "can my dog catch the coronavirus"
	out, _, err := runCLI(t, "search", "--index", dir, "--cross-model", model, "--backend", "ort",
		"--rerank", "cross", "--candidates", "20", "-k", "20", "--explain", "--json", q)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Hits []struct {
			ID      string  `json:"passage_id"`
			Text    string  `json:"text"`
			Score   float64 `json:"score"`
			Explain struct {
				Cross *float64 `json:"cross"`
			} `json:"explain"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Hits) != 20 {
		t.Fatalf("%d hits, %v\n%s", len(res.Hits), err, out)
	}
	ce, err := embed.OpenCrossEncoder(context.Background(), embed.Options{ModelDir: model, Backend: "ort"})
	if err != nil {
		t.Fatal(err)
	}
	defer ce.Close()
	texts := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		texts[i] = h.Text
	}
	want, err := ce.Score(context.Background(), q, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range res.Hits {
		if h.Explain.Cross == nil || abs(*h.Explain.Cross-float64(want[i])) > 1e-4 {
			t.Errorf("hit %d %s: explained cross score %v, recomputed %v", i, h.ID, h.Explain.Cross, want[i])
		}
		if i > 0 && want[i] > want[i-1]+1e-6 {
			t.Errorf("hit %d (%s) has cross score %v above the hit before it (%v)", i, h.ID, want[i], want[i-1])
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
