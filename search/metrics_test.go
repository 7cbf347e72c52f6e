package search

import (
	"encoding/json"
	"math"
	"testing"
)

// TestMetricsJSONNamesTheCutoff: nDCG and MRR are written under the cut-off they were taken
// at (a run at k 3 once read "ndcg_at_10"), with values computed by hand.
func TestMetricsJSONNamesTheCutoff(t *testing.T) {
	log2 := math.Log2
	tests := []struct {
		k               int
		ndcgKey, mrrKey string
		ndcg, mrr       float64
	}{
		// ranked a b c d, relevant b and d (gain 1): ideal DCG 1 + 1/log2(3).
		{3, "ndcg_at_3", "mrr_at_3", (1 / log2(3)) / (1 + 1/log2(3)), 0.5},
		{0, "ndcg_at_10", "mrr_at_10", (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3)), 0.5},
		{1, "ndcg_at_1", "mrr_at_1", 0, 0},
	}
	for _, tc := range tests {
		m := Metrics{K: tc.k}
		m.Add([]string{"a", "b", "c", "d"}, map[string]float64{"b": 1, "d": 1}, 0)
		b, err := json.Marshal(m.Result())
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]float64
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		wantK := tc.k
		if wantK == 0 {
			wantK = DefaultCutoff
		}
		if got["cutoff"] != float64(wantK) || got["judged_queries"] != 1 || got["recall_at_5"] != 1 {
			t.Errorf("k %d: %s", tc.k, b)
		}
		n, okN := got[tc.ndcgKey]
		r, okR := got[tc.mrrKey]
		if !okN || !okR || math.Abs(n-tc.ndcg) > 1e-12 || math.Abs(r-tc.mrr) > 1e-12 {
			t.Errorf("k %d: %s, want %s %.6f and %s %.6f", tc.k, b, tc.ndcgKey, tc.ndcg, tc.mrrKey, tc.mrr)
		}
		if tc.k != 0 && tc.k != 10 {
			if _, ok := got["ndcg_at_10"]; ok {
				t.Errorf("k %d: still writes ndcg_at_10: %s", tc.k, b)
			}
		}
	}
}
