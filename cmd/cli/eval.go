package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/search"
)

func cmdEval(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("eval", "--index LOCATION --queries Q.jsonl [--qrels QRELS.tsv] [flags]", stdio.Stderr)
	var loc indexer.Location
	loc.Flag(fs, "")
	qpath := fs.String("queries", "", "queries `file` (JSONL; BEIR queries.jsonl, or a QA file with gold_doc_ids / gold_passage_ids)")
	qrelsPath := fs.String("qrels", "", "BEIR qrels `file` (TSV with header: query-id, corpus-id, score)")
	var acc search.Metrics
	acc.Flags(fs) // -k
	depth := fs.Int("depth", 300, "passages retrieved per query before grouping them by document")
	asJSON := fs.Bool("json", false, "print JSON")
	runPath := fs.String("run", "", "also write the ranking of every query to this `file` (- for stdout), for trec_eval or ir_measures")
	plotPath := fs.String("plot", "", "also draw recall@k, nDCG, MRR and latency as an SVG `file` (- for stdout), this run beside those of --plot-with")
	var plotWith stringList
	fs.Var(&plotWith, "plot-with", "earlier runs to draw beside this one in --plot: the `file`s kairos eval --json wrote (comma-separated or repeated)")
	runFormat := fs.String("run-format", "trec", "format of --run: trec (qid Q0 docid rank score tag) or jsonl ({qid, hits: [{id, rank, score}]})")
	var qf queryFlags
	qf.register(fs)
	qf.models.registerModelsDir(fs)
	qf.search.TuningFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if loc.IsZero() || *qpath == "" {
		return usageErr(fs, "need --index and --queries")
	}
	if len(plotWith) > 0 && *plotPath == "" {
		return usageErr(fs, "--plot-with draws beside this run in --plot: give --plot FILE.svg")
	}
	if *runFormat != "trec" && *runFormat != "jsonl" {
		return usageErr(fs, "--run-format %q: want trec or jsonl", *runFormat)
	}
	qf.q.K, qf.kFlag = depth, "--depth"
	found := qf.findModel(ctx, loc, stdio.Stderr)
	ropts, tmpl, err := qf.resolve(fs, loc, stdio.Stderr)
	if err != nil {
		return err
	}
	ropts.ModelNote = found.note
	queries, err := readQueries(*qpath, tmpl)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	// Earlier runs are read before this one is measured, so a wrong file costs no evaluation.
	earlier, err := readEvalResults(plotWith, acc.Result().K)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	judged, err := judgements(queries, *qrelsPath)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	// Metrics over no judged query are zeros that read as a measurement.
	nJudged := 0
	for _, q := range queries {
		if _, ok := judged[q.qid()]; ok {
			nJudged++
		}
	}
	if nJudged == 0 {
		why := noJudgedQueries(queries, judged, *qpath, *qrelsPath)
		if *runPath == "" {
			return usageErr(fs, "%s", why)
		}
		fmt.Fprintf(stdio.Stderr, "kairos: note: %s; writing --run without metrics\n", why)
	}
	r, err := openRetrieval(ctx, ropts)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer r.Close()
	st, err := r.re.Stats()
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if err := qf.checkFilters(fs, st, stdio.Stderr); err != nil {
		return err
	}
	if err := checkBatch(r.re, st, *qpath, queries); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	tmpl.Mode = r.modeOf(tmpl.Mode) // for the report: the mode queries that name none ran

	var run runWriter
	toRun := nJudged
	if *runPath != "" {
		toRun = len(queries)
	}
	prog := newLoopProgress(stdio.Stderr, "queries", toRun)
	defer prog.done() // on an error too: it ends a terminal's line before the error's
	for _, q := range queries {
		rel, ok := judged[q.qid()]
		if !ok && *runPath == "" {
			continue
		}
		start := time.Now()
		res, err := r.re.Search(ctx, q.q)
		if err != nil {
			return fmt.Errorf("eval: query %s: %w", q.qid(), err)
		}
		lat := time.Since(start)
		hits := make([]search.Hit, len(res.Hits))
		for i, h := range res.Hits {
			hits[i] = h.Hit
		}
		if *runPath != "" {
			run.add(q.qid(), rankedDocs(hits, rel.passageLevel))
		}
		if ok {
			acc.Add(search.RankDocuments(hits, rel.passageLevel), rel.gain, lat)
		}
		prog.add(1)
	}
	prog.done() // before the results, which a terminal would print on its line
	if *runPath != "" {
		tag := "kairos-" + string(tmpl.Mode)
		if qf.rerank != "" && qf.rerank != "none" {
			tag += "-" + strings.ReplaceAll(qf.rerank, ",", "+")
		}
		if err := run.write(*runPath, *runFormat, tag, stdio.Stdout); err != nil {
			return fmt.Errorf("eval: --run: %w", err)
		}
	}
	if nJudged == 0 {
		return nil
	}
	res := evalResult{Index: loc.String(), Queries: *qpath, Mode: string(tmpl.Mode), Rerank: qf.rerank, MetricsResult: acc.Result()}
	if *plotPath != "" {
		if err := writeEvalPlot(*plotPath, append([]evalResult{res}, earlier...), stdio.Stdout); err != nil {
			return fmt.Errorf("eval: --plot: %w", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	w := stdio.Stdout
	fmt.Fprintf(w, "queries      %d judged (of %d)\n", res.MetricsResult.Queries, len(queries))
	fmt.Fprintf(w, "nDCG@%d      %.4f\n", acc.K, res.NDCG)
	fmt.Fprintf(w, "MRR@%d       %.4f\n", acc.K, res.MRR)
	fmt.Fprintf(w, "R@1          %.4f\n", res.R1)
	fmt.Fprintf(w, "R@5          %.4f\n", res.R5)
	fmt.Fprintf(w, "R@20         %.4f\n", res.R20)
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

// noJudgedQueries says why --qrels judges no query of qpath, with an id from each side: the
// usual cause is a qrels file of another split or dataset. (Without --qrels, judgements has
// refused queries that carry no gold ids.)
func noJudgedQueries(queries []batchQuery, judged map[string]relevance, qpath, qrelsPath string) string {
	if len(judged) == 0 {
		return fmt.Sprintf("--qrels %s judges nothing: no line has a score above 0", qrelsPath)
	}
	qid := ""
	for id := range judged {
		if qid == "" || id < qid {
			qid = id
		}
	}
	first := ""
	if len(queries) > 0 {
		first = queries[0].qid()
	}
	return fmt.Sprintf("--qrels %s judges none of the %d queries of --queries %s (its query ids are like %q, the queries' like %q): another split or dataset?",
		qrelsPath, len(queries), qpath, qid, first)
}

// evalResult is the JSON form of an evaluation: its own fields, then the metrics'.
type evalResult struct {
	Index   string `json:"index"`
	Queries string `json:"queries"`
	Mode    string `json:"mode"`
	Rerank  string `json:"rerank"`
	search.MetricsResult
}

// MarshalJSON writes the fields of r and of its metrics in one object. Without it the
// metrics' MarshalJSON (which names nDCG by its cut-off), promoted by the embedding, would
// write the metrics alone.
func (r evalResult) MarshalJSON() ([]byte, error) {
	type head struct {
		Index   string `json:"index"`
		Queries string `json:"queries"`
		Mode    string `json:"mode"`
		Rerank  string `json:"rerank"`
	}
	h, err := json.Marshal(head{r.Index, r.Queries, r.Mode, r.Rerank})
	if err != nil {
		return nil, err
	}
	m, err := json.Marshal(r.MetricsResult)
	if err != nil {
		return nil, err
	}
	return append(append(h[:len(h)-1], ','), m[1:]...), nil
}
