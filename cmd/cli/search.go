package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kairos-rag/kairos/search"
)

func cmdSearch(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("search", "--index DIR [flags] QUERY | --batch QUERIES.jsonl [--out RUN.jsonl]", stdio.Stderr)
	dir := fs.String("index", "", "index `directory`")
	k := fs.Int("k", 0, "number of hits (default 10, and 100 with --batch: evaluation runs need depth)")
	perDoc := fs.Int("per-doc", 0, "at most this many passages per document (1: one hit per document); 0: no cap")
	asJSON := fs.Bool("json", false, "print hits as JSON")
	mode := fs.String("mode", "bm25", "retriever: bm25, dense or hybrid")
	batch := fs.String("batch", "", "run the queries of a JSONL `file` ({\"id\"|\"_id\", \"text\"}; BEIR queries.jsonl works)")
	outPath := fs.String("out", "", "with --batch: write the run to this `file` (default stdout)")
	var sources stringList
	fs.Var(&sources, "source", "only passages from this source (repeatable)")
	dateFrom := fs.String("date-from", "", "only passages dated on or after (YYYY-MM-DD)")
	dateTo := fs.String("date-to", "", "only passages dated on or before (YYYY-MM-DD)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dir == "" {
		return usageErr(fs, "need --index")
	}
	m, err := search.ParseMode(*mode, search.ModeBM25)
	if err != nil {
		return usageErr(fs, "%v", err)
	}
	filters := search.Filters{Sources: sources}
	if filters.DateFrom, err = parseDay(*dateFrom); err != nil {
		return usageErr(fs, "--date-from: %v", err)
	}
	if filters.DateTo, err = parseDay(*dateTo); err != nil {
		return usageErr(fs, "--date-to: %v", err)
	}
	if !filters.DateTo.IsZero() {
		filters.DateTo = filters.DateTo.Add(24*time.Hour - time.Nanosecond)
	}
	ix, err := search.Open(*dir, search.Options{})
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	defer ix.Close()
	req := search.Request{K: *k, Mode: m, Filters: filters, PerDoc: *perDoc}
	if *batch != "" {
		if req.K == 0 {
			req.K = 100
		}
		if len(pos) > 0 {
			return usageErr(fs, "give either --batch or a query, not both")
		}
		return runBatch(ctx, ix, req, *batch, *outPath, stdio)
	}
	if len(pos) == 0 {
		return usageErr(fs, "no query")
	}
	req.Text = strings.Join(pos, " ")
	hits, err := ix.Search(ctx, req)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Query string       `json:"query"`
			Hits  []search.Hit `json:"hits"`
		}{req.Text, hits})
	}
	printHits(stdio.Stdout, hits)
	return nil
}

func parseDay(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse("2006-01-02", s)
}

// printHits prints a readable table, one hit per line, text cut to fit a terminal.
func printHits(w io.Writer, hits []search.Hit) {
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

func runBatch(ctx context.Context, ix *search.Index, req search.Request, in, outPath string, stdio IO) error {
	queries, err := readQueries(in)
	if err != nil {
		return fmt.Errorf("search --batch: %w", err)
	}
	var w io.Writer = stdio.Stdout
	if outPath != "" {
		f, err := os.Create(outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	start := time.Now()
	for _, q := range queries {
		req.Text = q.Text
		hits, err := ix.Search(ctx, req)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.qid(), err)
		}
		line := runLine{QID: q.qid(), Hits: make([]runHit, len(hits))}
		for i, h := range hits {
			line.Hits[i] = runHit{DocID: h.DocID, PassageID: h.ID, Score: h.Score, Rank: h.Rank, Title: h.Title, Text: h.Text, Date: h.Date}
		}
		if err := enc.Encode(&line); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(stdio.Stderr, "%d queries in %.2fs (%.0f queries/s)\n", len(queries), el.Seconds(), float64(len(queries))/el.Seconds())
	return nil
}
