package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/search"
)

func cmdEval(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("eval", "--index DIR --queries Q.jsonl [--qrels QRELS.tsv] [flags]", stdio.Stderr)
	dir := fs.String("index", "", "index `directory`")
	qpath := fs.String("queries", "", "queries `file` (JSONL; BEIR queries.jsonl, or a QA file with gold_doc_ids / gold_passage_ids)")
	qrelsPath := fs.String("qrels", "", "BEIR qrels `file` (TSV with header: query-id, corpus-id, score)")
	k := fs.Int("k", 10, "cut-off of nDCG and MRR")
	depth := fs.Int("depth", 300, "passages retrieved per query before grouping them by document")
	mode := fs.String("mode", "bm25", "retriever: bm25, dense or hybrid")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" || *qpath == "" {
		return usageErr(fs, "need --index and --queries")
	}
	m, err := search.ParseMode(*mode, search.ModeBM25)
	if err != nil {
		return usageErr(fs, "%v", err)
	}
	queries, err := readQueries(*qpath)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	judged, err := judgements(queries, *qrelsPath)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	ix, err := search.Open(*dir, search.Options{})
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer ix.Close()

	var acc metricsAcc
	acc.k = *k
	for _, q := range queries {
		rel, ok := judged[q.qid()]
		if !ok {
			continue
		}
		start := time.Now()
		hits, err := ix.Search(ctx, search.Request{Text: q.Text, K: *depth, Mode: m})
		if err != nil {
			return fmt.Errorf("eval: query %s: %w", q.qid(), err)
		}
		acc.latencies = append(acc.latencies, time.Since(start))
		acc.add(rankedIDs(hits, rel.passageLevel), rel.gain)
	}
	res := acc.result()
	res.Index, res.Queries, res.Mode = *dir, *qpath, string(m)
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	w := stdio.Stdout
	fmt.Fprintf(w, "queries      %d judged (of %d)\n", res.Judged, len(queries))
	fmt.Fprintf(w, "nDCG@%d      %.4f\n", *k, res.NDCG)
	fmt.Fprintf(w, "MRR@%d       %.4f\n", *k, res.MRR)
	fmt.Fprintf(w, "R@1          %.4f\n", res.R1)
	fmt.Fprintf(w, "R@5          %.4f\n", res.R5)
	fmt.Fprintf(w, "Recall@100   %.4f\n", res.R100)
	fmt.Fprintf(w, "latency      p50 %.2f ms, p99 %.2f ms (depth %d)\n", res.P50ms, res.P99ms, *depth)
	return nil
}

// relevance holds one query's judgements: gain per document (or passage) id.
type relevance struct {
	gain         map[string]float64
	passageLevel bool // ids are passage ids, not document ids
}

// judgements collects gold labels from a qrels file or, without one, from the queries' own
// gold_doc_ids / gold_passage_ids.
func judgements(queries []batchQuery, qrelsPath string) (map[string]relevance, error) {
	out := map[string]relevance{}
	if qrelsPath != "" {
		f, err := os.Open(qrelsPath)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			cols := strings.Split(strings.TrimSpace(sc.Text()), "\t")
			if line == 1 && len(cols) >= 1 && strings.Contains(strings.ToLower(cols[0]), "query") {
				continue // header
			}
			if len(cols) == 1 && cols[0] == "" {
				continue
			}
			if len(cols) != 3 {
				return nil, fmt.Errorf("%s: line %d: want 3 tab-separated columns (query-id, corpus-id, score), got %d", qrelsPath, line, len(cols))
			}
			g, err := strconv.ParseFloat(cols[2], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: score %q: %w", qrelsPath, line, cols[2], err)
			}
			if g <= 0 {
				continue
			}
			r, ok := out[cols[0]]
			if !ok {
				r = relevance{gain: map[string]float64{}}
				out[cols[0]] = r
			}
			r.gain[cols[1]] = g
		}
		return out, sc.Err()
	}
	for _, q := range queries {
		ids, passage := q.Gold, false
		if len(q.GoldP) > 0 {
			ids, passage = q.GoldP, true
		}
		if len(ids) == 0 {
			continue
		}
		r := relevance{gain: map[string]float64{}, passageLevel: passage}
		for _, id := range ids {
			r.gain[id] = 1
		}
		out[q.qid()] = r
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no judgements: give --qrels, or gold_doc_ids / gold_passage_ids in the queries")
	}
	return out, nil
}

// rankedIDs turns passage hits into a ranking of documents, each scored by its best passage
// (hits arrive best first, so the first passage of a document is its best), or of passages.
func rankedIDs(hits []search.Hit, passages bool) []string {
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

type metricsAcc struct {
	k                       int
	n                       int
	ndcg, mrr, r1, r5, r100 float64
	latencies               []time.Duration
}

func (a *metricsAcc) add(ranked []string, gain map[string]float64) {
	a.n++
	var dcg float64
	for i := 0; i < len(ranked) && i < a.k; i++ {
		if g := gain[ranked[i]]; g > 0 {
			dcg += (math.Pow(2, g) - 1) / math.Log2(float64(i+2))
		}
	}
	ideal := make([]float64, 0, len(gain))
	for _, g := range gain {
		ideal = append(ideal, g)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ideal)))
	var idcg float64
	for i := 0; i < len(ideal) && i < a.k; i++ {
		idcg += (math.Pow(2, ideal[i]) - 1) / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		a.ndcg += dcg / idcg
	}
	for i := 0; i < len(ranked) && i < a.k; i++ {
		if gain[ranked[i]] > 0 {
			a.mrr += 1 / float64(i+1)
			break
		}
	}
	recall := func(n int) float64 {
		found := 0
		for i := 0; i < len(ranked) && i < n; i++ {
			if gain[ranked[i]] > 0 {
				found++
			}
		}
		return float64(found) / float64(len(gain))
	}
	a.r1 += recall(1)
	a.r5 += recall(5)
	a.r100 += recall(100)
}

// evalResult is the JSON form of an evaluation.
type evalResult struct {
	Index   string  `json:"index"`
	Queries string  `json:"queries"`
	Mode    string  `json:"mode"`
	Judged  int     `json:"judged_queries"`
	NDCG    float64 `json:"ndcg_at_10"`
	MRR     float64 `json:"mrr_at_10"`
	R1      float64 `json:"recall_at_1"`
	R5      float64 `json:"recall_at_5"`
	R100    float64 `json:"recall_at_100"`
	P50ms   float64 `json:"latency_p50_ms"`
	P99ms   float64 `json:"latency_p99_ms"`
}

func (a *metricsAcc) result() evalResult {
	r := evalResult{Judged: a.n}
	if a.n == 0 {
		return r
	}
	n := float64(a.n)
	r.NDCG, r.MRR, r.R1, r.R5, r.R100 = a.ndcg/n, a.mrr/n, a.r1/n, a.r5/n, a.r100/n
	r.P50ms, r.P99ms = percentileMS(a.latencies, 0.50), percentileMS(a.latencies, 0.99)
	return r
}

// percentileMS returns the nearest-rank percentile of ds in milliseconds.
func percentileMS(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i].Microseconds()) / 1000
}
