package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// queryFlags are the retrieval flags shared by search and eval.
type queryFlags struct {
	models     modelFlags
	mode       string
	timeSpec   string
	rerank     string
	candidates int
	explain    bool
	exact      bool
	fusion     string
	alpha      float64
	rrfK       int
	ef         int
}

func (q *queryFlags) register(fs *flag.FlagSet) {
	q.models.register(fs, true)
	fs.StringVar(&q.mode, "mode", "", "retriever: bm25, dense or hybrid (default: hybrid when --model is given, else bm25)")
	fs.StringVar(&q.timeSpec, "time", "none", "time need: none, recent, YYYY, YYYY..YYYY, \"from YYYY to YYYY\" or auto (from the query)")
	fs.StringVar(&q.rerank, "rerank", "none", "rerank stages: none, time, cross, cross,time or wikichat")
	fs.IntVar(&q.candidates, "candidates", rerank.DefaultCandidates, "passages the rerankers see")
	fs.BoolVar(&q.explain, "explain", false, "include each hit's score breakdown")
	fs.BoolVar(&q.exact, "exact", false, "dense: exact (brute-force) search instead of HNSW")
	fs.StringVar(&q.fusion, "fusion", string(search.FusionRRF), "hybrid fusion: rrf or convex")
	fs.Float64Var(&q.alpha, "alpha", search.DefaultAlpha, "convex fusion: weight of the dense score")
	fs.IntVar(&q.rrfK, "rrf-k", search.DefaultRRFK, "rrf fusion: k")
	fs.IntVar(&q.ef, "ef", 0, "HNSW search list size (0: the index's)")
}

// resolve checks the flags and returns the retrieval options and the query template.
func (q *queryFlags) resolve(fs *flag.FlagSet, dir string) (retrievalOptions, rerank.Query, error) {
	def := search.ModeBM25
	if q.models.model != "" {
		def = search.ModeHybrid
	}
	var rq rerank.Query
	m, err := search.ParseMode(q.mode, def)
	if err != nil {
		return retrievalOptions{}, rq, usageErr(fs, "%v", err)
	}
	if rq.Time, err = timex.Parse(q.timeSpec); err != nil {
		return retrievalOptions{}, rq, usageErr(fs, "--time: %v", err)
	}
	if rq.Rerank, err = rerank.ParseStages(q.rerank); err != nil {
		return retrievalOptions{}, rq, usageErr(fs, "--rerank: %v", err)
	}
	rq.Mode, rq.Exact, rq.Candidates, rq.Explain = m, q.exact, q.candidates, q.explain
	o := retrievalOptions{Index: dir, Models: q.models, Search: search.Options{
		Fusion: search.Fusion(q.fusion), Alpha: q.alpha, RRFK: q.rrfK, EfSearch: q.ef,
	}}
	return o, rq, nil
}

func cmdSearch(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("search", "--index DIR [flags] QUERY | --batch QUERIES.jsonl [--out RUN.jsonl]", stdio.Stderr)
	dir := fs.String("index", "", "index `directory`")
	k := fs.Int("k", 0, "number of hits (default 10, and 100 with --batch: evaluation runs need depth)")
	perDoc := fs.Int("per-doc", 0, "at most this many passages per document (1: one hit per document); 0: no cap")
	asJSON := fs.Bool("json", false, "print hits as JSON")
	batch := fs.String("batch", "", "run the queries of a JSONL `file` ({\"id\"|\"_id\", \"text\", \"time\"?}; BEIR queries.jsonl works)")
	outPath := fs.String("out", "", "with --batch: write the run to this `file` (default stdout)")
	var sources stringList
	fs.Var(&sources, "source", "only passages from this source (repeatable)")
	dateFrom := fs.String("date-from", "", "only passages dated on or after (YYYY-MM-DD)")
	dateTo := fs.String("date-to", "", "only passages dated on or before (YYYY-MM-DD)")
	var qf queryFlags
	qf.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dir == "" {
		return usageErr(fs, "need --index")
	}
	ropts, q, err := qf.resolve(fs, *dir)
	if err != nil {
		return err
	}
	q.K, q.PerDoc, q.Filters.Sources = *k, *perDoc, sources
	if q.Filters.DateFrom, err = parseDay(*dateFrom); err != nil {
		return usageErr(fs, "--date-from: %v", err)
	}
	if q.Filters.DateTo, err = parseDay(*dateTo); err != nil {
		return usageErr(fs, "--date-to: %v", err)
	}
	if !q.Filters.DateTo.IsZero() {
		q.Filters.DateTo = q.Filters.DateTo.Add(24*time.Hour - time.Nanosecond)
	}
	if *batch != "" && len(pos) > 0 {
		return usageErr(fs, "give either --batch or a query, not both")
	}
	if *batch == "" && len(pos) == 0 {
		return usageErr(fs, "no query")
	}
	r, err := openRetrieval(ctx, ropts)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	defer r.Close()
	if *batch != "" {
		if q.K == 0 {
			q.K = 100
		}
		return runBatch(ctx, r.re, q, *batch, *outPath, stdio)
	}
	q.Text = strings.Join(pos, " ")
	res, err := r.re.Search(ctx, q)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Query string       `json:"query"`
			Time  string       `json:"time"`
			Hits  []rerank.Hit `json:"hits"`
		}{q.Text, res.Time.String(), res.Hits})
	}
	printHits(stdio.Stdout, res.Hits)
	return nil
}

func parseDay(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse("2006-01-02", s)
}

// printHits prints a readable table, one hit per line, text cut to fit a terminal.
func printHits(w io.Writer, hits []rerank.Hit) {
	if len(hits) == 0 {
		fmt.Fprintln(w, "no hits")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tSCORE\tPASSAGE\tDATE\tTEXT")
	for _, h := range hits {
		date := ""
		if !h.Date.IsZero() {
			date = h.Date.Format("2006-01-02")
		}
		fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\t%s\n", h.Rank, h.Score, h.ID, date, clip(h.Text, 100))
	}
	tw.Flush()
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// batchQuery is one line of a query file: Kairos's own or BEIR's queries.jsonl.
type batchQuery struct {
	ID    json.RawMessage `json:"id"`
	BEIR  json.RawMessage `json:"_id"`
	Text  string          `json:"text"`
	Time  string          `json:"time"`
	Gold  []string        `json:"gold_doc_ids"`
	GoldP []string        `json:"gold_passage_ids"`
}

// qid returns the query id as a string whether it was written as a string or a number.
func (q *batchQuery) qid() string {
	raw := q.ID
	if len(raw) == 0 {
		raw = q.BEIR
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// query returns the rerank query for q: the template with q's text and, when q has one, its
// own time need.
func (q *batchQuery) query(tmpl rerank.Query) (rerank.Query, error) {
	tmpl.Text = q.Text
	if q.Time != "" {
		t, err := timex.Parse(q.Time)
		if err != nil {
			return tmpl, fmt.Errorf("query %s: time: %w", q.qid(), err)
		}
		tmpl.Time = t
	}
	return tmpl, nil
}

// readQueries reads a JSONL query file; a malformed line is an error naming file and line.
func readQueries(path string) ([]batchQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []batchQuery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var q batchQuery
		if err := json.Unmarshal([]byte(b), &q); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if q.qid() == "" {
			return nil, fmt.Errorf("%s: line %d: query has no \"id\" or \"_id\"", path, line)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

type runHit struct {
	DocID     string    `json:"doc_id"`
	PassageID string    `json:"passage_id"`
	Score     float64   `json:"score"`
	Rank      int       `json:"rank"`
	Title     string    `json:"title"`
	Text      string    `json:"text"`
	Date      time.Time `json:"date,omitzero"`
}

type runLine struct {
	QID  string   `json:"qid"`
	Hits []runHit `json:"hits"`
}

func runBatch(ctx context.Context, re *rerank.Engine, tmpl rerank.Query, in, outPath string, stdio IO) error {
	queries, err := readQueries(in)
	if err != nil {
		return fmt.Errorf("search --batch: %w", err)
	}
	start := time.Now()
	// The run file is written atomically: a failed query leaves no truncated run behind.
	err = writeOutput(outPath, stdio.Stdout, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		for _, q := range queries {
			req, err := q.query(tmpl)
			if err != nil {
				return fmt.Errorf("search --batch: %s: %w", in, err)
			}
			res, err := re.Search(ctx, req)
			if err != nil {
				return fmt.Errorf("query %s: %w", q.qid(), err)
			}
			line := runLine{QID: q.qid(), Hits: make([]runHit, len(res.Hits))}
			for i, h := range res.Hits {
				line.Hits[i] = runHit{DocID: h.DocID, PassageID: h.ID, Score: h.Score, Rank: h.Rank, Title: h.Title, Text: h.Text, Date: h.Date}
			}
			if err := enc.Encode(&line); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(stdio.Stderr, "%d queries in %.2fs (%.0f queries/s)\n", len(queries), el.Seconds(), float64(len(queries))/el.Seconds())
	return nil
}
