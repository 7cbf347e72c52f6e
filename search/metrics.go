package search

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"time"
)

// Metrics accumulates retrieval quality over queries: nDCG@K and MRR@K at the cut-off K, and
// recall at 1, 5, 20 and 100. Gains follow the usual trec_eval nDCG (2^g - 1).
type Metrics struct {
	K         int // cut-off of nDCG and MRR; 0 means DefaultCutoff
	n         int
	ndcg, mrr float64
	r1, r5    float64
	r20, r100 float64
	latencies []time.Duration
}

// Add scores one query: ranked ids best first (documents or passages, no duplicates), the
// gain of each relevant id, and the query's latency.
func (m *Metrics) Add(ranked []string, gain map[string]float64, latency time.Duration) {
	m.SetDefaults()
	m.n++
	m.latencies = append(m.latencies, latency)
	disc := func(i int) float64 { return 1 / math.Log2(float64(i+2)) }
	var dcg float64
	for i := 0; i < len(ranked) && i < m.K; i++ {
		if g := gain[ranked[i]]; g > 0 {
			dcg += (math.Pow(2, g) - 1) * disc(i)
		}
	}
	ideal := make([]float64, 0, len(gain))
	for _, g := range gain {
		if g > 0 {
			ideal = append(ideal, g)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ideal)))
	var idcg float64
	for i := 0; i < len(ideal) && i < m.K; i++ {
		idcg += (math.Pow(2, ideal[i]) - 1) * disc(i)
	}
	if idcg > 0 {
		m.ndcg += dcg / idcg
	}
	for i := 0; i < len(ranked) && i < m.K; i++ {
		if gain[ranked[i]] > 0 {
			m.mrr += 1 / float64(i+1)
			break
		}
	}
	recall := func(n int) float64 {
		if len(ideal) == 0 {
			return 0
		}
		found := 0
		for i := 0; i < len(ranked) && i < n; i++ {
			if gain[ranked[i]] > 0 {
				found++
			}
		}
		return float64(found) / float64(len(ideal))
	}
	m.r1 += recall(1)
	m.r5 += recall(5)
	m.r20 += recall(20)
	m.r100 += recall(100)
}

// MetricsResult is the mean of each metric over the queries added. In JSON (MarshalJSON)
// nDCG and MRR are named by their cut-off, "ndcg_at_<K>" and "mrr_at_<K>", and the cut-off is
// written as "cutoff": a run at --k 20 must not read as nDCG@10.
type MetricsResult struct {
	Queries int     `json:"judged_queries"`
	K       int     `json:"cutoff"` // of NDCG and MRR (Metrics.K)
	NDCG    float64 `json:"-"`      // at K
	MRR     float64 `json:"-"`      // at K
	R1      float64 `json:"recall_at_1"`
	R5      float64 `json:"recall_at_5"`
	R20     float64 `json:"recall_at_20"`
	R100    float64 `json:"recall_at_100"`
	P50ms   float64 `json:"latency_p50_ms"`
	P99ms   float64 `json:"latency_p99_ms"`
}

// MarshalJSON writes the fields with nDCG and MRR named by the cut-off (see MetricsResult).
func (r MetricsResult) MarshalJSON() ([]byte, error) {
	type plain MetricsResult // the same fields without this method
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	k := strconv.Itoa(r.K)
	atK, err := json.Marshal(map[string]float64{"ndcg_at_" + k: r.NDCG, "mrr_at_" + k: r.MRR})
	if err != nil {
		return nil, err
	}
	return append(append(b[:len(b)-1], ','), atK[1:]...), nil
}

// Result returns the means so far.
func (m *Metrics) Result() MetricsResult {
	k := m.K
	if k == 0 {
		k = DefaultCutoff
	}
	r := MetricsResult{Queries: m.n, K: k}
	if m.n == 0 {
		return r
	}
	n := float64(m.n)
	r.NDCG, r.MRR, r.R1, r.R5, r.R20, r.R100 = m.ndcg/n, m.mrr/n, m.r1/n, m.r5/n, m.r20/n, m.r100/n
	r.P50ms, r.P99ms = PercentileMS(m.latencies, 0.50), PercentileMS(m.latencies, 0.99)
	return r
}

// PercentileMS returns the nearest-rank percentile p (0..1) of ds in milliseconds.
func PercentileMS(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i].Nanoseconds()) / 1e6
}

// RankDocuments turns passage hits (best first) into a ranking of documents, each placed at
// its best passage; with passages set, it ranks passage ids instead.
func RankDocuments(hits []Hit, passages bool) []string {
	out := make([]string, 0, len(hits))
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		id := h.DocID
		if passages {
			id = h.ID
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
