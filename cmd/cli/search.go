package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/rerank/request"
	"github.com/kairos-rag/kairos/search"
)

// queryFlags are the retrieval flags shared by search and eval. They fill a request.Query,
// the request POST /v1/search and the web page fill too, so request.Parse gives every front
// end the same defaults and errors.
type queryFlags struct {
	models    modelFlags
	q         request.Query
	rerank    string
	sources   stringList
	languages stringList
	blocks    stringList
	search    search.Options // --ef, --binary-rescore
	kFlag     string         // the flag that sets K: -k for search, --depth for eval
	log       logFlags
}

func (q *queryFlags) register(fs *flag.FlagSet) {
	q.models.register(fs, true)
	q.log.register(fs, "warn")
	fs.StringVar(&q.q.Mode, "mode", "", "retriever: bm25, dense or hybrid (default: hybrid when the index has vectors and --model is given or found, else bm25)")
	fs.StringVar(&q.q.Time, "time", "", "time need: none, recent, YYYY, YYYY..YYYY, \"from YYYY to YYYY\" or auto (from the query); default auto with --rerank time or wikichat, else none")
	fs.StringVar(&q.rerank, "rerank", "none", "rerank stages: none, time, cross, cross,time or wikichat")
	fs.IntVar(&q.q.Candidates, "candidates", 0, fmt.Sprintf("passages the rerankers see (0: %d)", rerank.DefaultCandidates))
	fs.BoolVar(&q.q.Explain, "explain", false, "include each hit's score breakdown")
	fs.BoolVar(&q.q.Exact, "exact", false, "dense: exact (brute-force) search instead of HNSW")
	fs.StringVar(&q.q.Fusion, "fusion", "", fmt.Sprintf("hybrid fusion: rrf or convex (default %s)", search.FusionRRF))
	fs.Float64Var(&q.q.Alpha, "alpha", 0, fmt.Sprintf("convex fusion: weight of the dense score (0: %v)", search.DefaultAlpha))
	fs.IntVar(&q.q.RRFK, "rrf-k", 0, fmt.Sprintf("rrf fusion: k (0: %d)", search.DefaultRRFK))
	q.search.Flags(fs)
	fs.StringVar(&q.q.Now, "now", "", "ask as of this date (YYYY-MM-DD or RFC 3339): anchors recent, \"last year\", \"since 2010\" (default: today)")
	fs.Float64Var(&q.q.RecentHalfLifeYears, "recent-half-life", 0, fmt.Sprintf("time need recent: age in years at which a passage earns half the credit of a current one (0: %v)", rerank.DefaultOptions().RecentHalfLifeYears))
	fs.Var(&q.sources, "source", "only passages from this source (repeatable)")
	fs.Var(&q.languages, "language", "only passages in this language, the query analysed in it (repeatable; a multilingual index searches all its languages by default)")
	fs.Var(&q.blocks, "block-type", "only passages of this block type: text, table or infobox (repeatable)")
	fs.StringVar(&q.q.Filters.DateFrom, "date-from", "", "only passages dated on or after (YYYY-MM-DD or RFC 3339)")
	fs.StringVar(&q.q.Filters.DateTo, "date-to", "", "only passages dated on or before (YYYY-MM-DD, whole day included, or RFC 3339)")
}

// resolve returns the retrieval options and the request the flags describe, checked by
// request.Parse (with a placeholder text) so that a bad flag fails before the index opens.
// Logs and notices go to stderr.
func (q *queryFlags) resolve(fs *flag.FlagSet, loc indexer.Location, stderr io.Writer) (retrievalOptions, request.Query, error) {
	log, err := q.log.logger(fs, stderr)
	if err != nil {
		return retrievalOptions{}, q.q, err
	}
	tmpl := q.q
	tmpl.Rerank = request.List{q.rerank}
	tmpl.Filters.Source = request.List(q.sources)
	tmpl.Filters.Language = request.List(q.languages)
	tmpl.Filters.BlockType = request.List(q.blocks)
	// A mode not asked for stays "": the live index decides it (live.DefaultMode), as it does
	// for the HTTP API.
	check := tmpl
	check.Text = "-"
	parsed, err := request.Parse(check, request.Limits{})
	if err != nil {
		return retrievalOptions{}, tmpl, q.requestErr(fs, err)
	}
	if slices.Contains(parsed.Rerank, rerank.StageCross) && q.models.crossModel == "" {
		return retrievalOptions{}, tmpl, usageErr(fs, "--rerank %s needs a cross-encoder: add --cross-model DIR (kairos models pull cross-encoder/ms-marco-MiniLM-L-6-v2 downloads one)", q.rerank)
	}
	o := retrievalOptions{Location: loc, Models: q.models, Search: q.search,
		Logger: log, Notes: stderr, ModeAsked: tmpl.Mode != ""}
	return o, tmpl, nil
}

// findModel finds the index's sentence encoder when no --model was given and the mode is not
// bm25 (findIndexModel), saying on w which folder it uses: search and eval then run the mode
// serve runs on the same index.
func (q *queryFlags) findModel(ctx context.Context, loc indexer.Location, w io.Writer) indexModel {
	if q.q.Mode == string(search.ModeBM25) {
		return indexModel{}
	}
	found := q.models.findIndexModel(ctx, loc)
	if found.dir != "" {
		fmt.Fprintf(w, "kairos: %s\n", found.note)
	}
	return found
}

// flagOf names the command-line flag of a request field.
var flagOf = map[string]string{
	"k": "-k", "mode": "--mode", "time": "--time", "rerank": "--rerank", "candidates": "--candidates",
	"per_doc": "--per-doc", "fusion": "--fusion", "alpha": "--alpha", "rrf_k": "--rrf-k", "now": "--now",
	"recent_half_life_years": "--recent-half-life", "filters.date_from": "--date-from",
	"filters.date_to": "--date-to", "text": "query", "min_score": "--min-score",
}

// requestErr turns a refused flag request into one line naming the flag (no usage dump: the
// flag and the reason say it all).
func (q *queryFlags) requestErr(fs *flag.FlagSet, err error) error {
	var re *request.Error
	if !errors.As(err, &re) {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	name, ok := flagOf[re.Field]
	if re.Field == "k" && q.kFlag != "" {
		name = q.kFlag
	}
	if !ok && strings.HasPrefix(re.Field, "filters.source") {
		name, ok = "--source", true
	}
	if !ok && strings.HasPrefix(re.Field, "filters.language") {
		name, ok = "--language", true
	}
	if !ok && strings.HasPrefix(re.Field, "filters.block_type") {
		name, ok = "--block-type", true
	}
	if !ok {
		name = re.Field
	}
	return usageErr(fs, "%s: %s", name, re.Msg)
}

func cmdSearch(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("search", "--index LOCATION [flags] QUERY | --batch QUERIES.jsonl [--out RUN.jsonl]", stdio.Stderr)
	var loc indexer.Location
	loc.Flag(fs, "")
	k := fs.Int("k", 0, fmt.Sprintf("number of hits, >= 1 (default %d, and %d with --batch: evaluation runs need depth)", request.DefaultK, request.DefaultBatchK))
	perDoc := fs.Int("per-doc", 0, "at most this many passages per document (1: one hit per document); 0: no cap")
	asJSON := fs.Bool("json", false, "print hits as JSON")
	width := fs.Int("width", 0, fmt.Sprintf("table line `width` in columns (0: the terminal's; not on a terminal, text clipped at %d characters)", defaultTextWidth))
	var minScore *float64
	fs.Func("min-score", "drop hits scoring below this `score` (the last rerank stage's, else the retrieval score, whose scale is the mode's): no hit rather than a weak one; default none", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return errors.New("want a number")
		}
		minScore = &f
		return nil
	})
	batch := fs.String("batch", "", "run the queries of a JSONL `file`: {\"id\"|\"_id\", \"text\"} plus any field of POST /v1/search's query (time, now, filters, rerank, k, ...), which overrides the flags for that line; BEIR queries.jsonl works")
	outPath := fs.String("out", "", "with --batch: write the run to this `file` (default stdout)")
	var qf queryFlags
	qf.register(fs)
	qf.models.registerModelsDir(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if loc.IsZero() {
		return usageErr(fs, "need --index")
	}
	if *batch != "" && len(pos) > 0 {
		return usageErr(fs, "give either --batch or a query, not both")
	}
	if *batch == "" && len(pos) == 0 {
		return usageErr(fs, "no query")
	}
	// Flags of the other form would be dropped without a word.
	if *batch == "" && *outPath != "" {
		return usageErr(fs, "--out writes the run of --batch: give --batch FILE, or drop --out (a single query prints to stdout)")
	}
	if *batch != "" {
		for _, f := range []string{"json", "width"} {
			if flagSet(fs, f) {
				return usageErr(fs, "--%s shapes a single query's output; --batch writes JSON lines: drop --%s", f, f)
			}
		}
	}
	qf.q.PerDoc, qf.q.MinScore = *perDoc, minScore
	switch {
	case flagSet(fs, "k"):
		qf.q.K = request.Int(*k)
	case *batch != "":
		qf.q.K = request.Int(request.DefaultBatchK)
	}
	found := qf.findModel(ctx, loc, stdio.Stderr)
	ropts, tmpl, err := qf.resolve(fs, loc, stdio.Stderr)
	if err != nil {
		return err
	}
	ropts.ModelNote = found.note
	var queries []batchQuery
	if *batch != "" {
		// Every line is read and checked before the index opens: a bad line costs nothing.
		if queries, err = readQueries(*batch, tmpl); err != nil {
			return fmt.Errorf("search --batch: %w", err)
		}
	}
	r, err := openRetrieval(ctx, ropts)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	defer r.Close()
	st, err := r.re.Stats()
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if err := qf.checkFilters(fs, st, stdio.Stderr); err != nil {
		return err
	}
	if *batch != "" {
		if err := checkBatch(r.re, st, *batch, queries); err != nil {
			return fmt.Errorf("search --batch: %w", err)
		}
		return runBatch(ctx, r.re, queries, *outPath, stdio)
	}
	tmpl.Text = strings.Join(pos, " ")
	q, err := request.Parse(tmpl, request.Limits{})
	if err != nil {
		return qf.requestErr(fs, err)
	}
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
	tw := *width
	if tw == 0 {
		tw = ttyWidth(stdio.Stdout)
	}
	printHits(stdio.Stdout, res.Hits, tw, q.Explain)
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// printHits prints a readable table, one hit per line, text cut to fit a terminal.
// defaultTextWidth is how many characters of a hit's text the table shows when the width
// is neither asked for (--width) nor known (not a terminal): lines a pipe can rely on.
const defaultTextWidth = 100

// minTextWidth is the least text a row shows, however narrow the width asked for.
const minTextWidth = 20

// printHits prints hits as a table whose lines fit width columns (0: the text column is
// defaultTextWidth characters). With explain, each hit is followed by its score breakdown,
// indented: how the retrieval score is made, what each rerank stage did, and the final score.
func printHits(w io.Writer, hits []rerank.Hit, width int, explain bool) {
	if len(hits) == 0 {
		fmt.Fprintln(w, "no hits")
		return
	}
	rows := [][4]string{{"RANK", "SCORE", "PASSAGE", "DATE"}}
	for _, h := range hits {
		date := ""
		if !h.Date.IsZero() {
			date = h.Date.Format("2006-01-02")
		}
		rows = append(rows, [4]string{strconv.Itoa(h.Rank), fmt.Sprintf("%.3f", h.Score), h.ID, date})
	}
	var colw [4]int
	for _, r := range rows {
		for i, c := range r {
			colw[i] = max(colw[i], utf8.RuneCountInString(c))
		}
	}
	prefix := 0
	for _, c := range colw {
		prefix += c + 2
	}
	text := defaultTextWidth
	if width > 0 {
		text = max(minTextWidth, width-prefix)
	}
	line := func(r [4]string, t string) {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", colw[i]-utf8.RuneCountInString(c)+2))
		}
		b.WriteString(t)
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(rows[0], "TEXT")
	for i, h := range hits {
		line(rows[i+1], clip(h.Text, text))
		if explain && h.Explain != nil {
			for _, l := range explainLines(h) {
				fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", colw[0]+2), l)
			}
		}
	}
}

// explainLines is a hit's Explanation in words, for the table (--json has the fields).
func explainLines(h rerank.Hit) []string {
	e := h.Explain
	var out []string
	if e.Formula != "" {
		out = append(out, e.Formula)
	}
	out = append(out, e.Notes...)
	if e.Cross != nil {
		out = append(out, fmt.Sprintf("cross-encoder %.4g", *e.Cross))
	}
	if e.TimeScore != nil {
		out = append(out, fmt.Sprintf("time score %.4g, relevance %.4g", *e.TimeScore, e.Relevance))
	}
	return append(out, fmt.Sprintf("final %.4g (the SCORE column)", e.Final))
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// batchQuery is one line of a query file: Kairos's own or BEIR's queries.jsonl. Besides the
// ids and gold labels it may carry any field of request.Query (text, time, now, filters,
// rerank, k, ...); what it does not carry comes from the command-line flags. Other fields
// (BEIR's "metadata") are ignored.
type batchQuery struct {
	ID    json.RawMessage `json:"id"`
	BEIR  json.RawMessage `json:"_id"`
	Gold  []string        `json:"gold_doc_ids"`
	GoldP []string        `json:"gold_passage_ids"`
	request.Query
	q    rerank.Query // parsed by request.Parse
	line int          // in its file, from 1
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

// withTemplate returns a batchQuery whose request starts as a deep copy of tmpl, so that
// decoding a line into it overrides the fields the line has and never writes into tmpl.
func withTemplate(tmpl request.Query) batchQuery {
	q := tmpl
	if tmpl.K != nil {
		q.K = request.Int(*tmpl.K)
	}
	if tmpl.MinScore != nil {
		ms := *tmpl.MinScore
		q.MinScore = &ms
	}
	q.Rerank = slices.Clone(tmpl.Rerank)
	q.Filters.Source = slices.Clone(tmpl.Filters.Source)
	q.Filters.Language = slices.Clone(tmpl.Filters.Language)
	q.Filters.BlockType = slices.Clone(tmpl.Filters.BlockType)
	return batchQuery{Query: q}
}

// readQueries reads a JSONL query file, each line over tmpl, and parses every query with
// request.Parse. A malformed line or a refused request is an error naming file and line.
func readQueries(path string, tmpl request.Query) ([]batchQuery, error) {
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
		q := withTemplate(tmpl)
		if err := json.Unmarshal([]byte(b), &q); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if err := misnamed([]byte(b), q); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if q.qid() == "" {
			return nil, fmt.Errorf("%s: line %d: query has no \"id\" or \"_id\"", path, line)
		}
		if q.q, err = request.Parse(q.Query, request.Limits{}); err != nil {
			return nil, fmt.Errorf("%s: line %d: query %s: %w", path, line, q.qid(), err)
		}
		q.line = line
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// misnamed refuses a line with a field that is a near miss of a request field ("query" for
// "text"), as POST /v1/search does: silently ignored, it would run a different query. Other
// fields (BEIR's "metadata") stay ignored.
func misnamed(line []byte, q batchQuery) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil // not an object: the decoder above has already said so
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if s := request.SuggestField(q, k); s != "" && s != k {
			return fmt.Errorf("unknown field %q (did you mean %q?)", k, s)
		}
	}
	return nil
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

func runBatch(ctx context.Context, re *live.Index, queries []batchQuery, outPath string, stdio IO) error {
	start := time.Now()
	prog := newLoopProgress(stdio.Stderr, "queries", len(queries))
	defer prog.done()
	// The run file is written atomically: a failed query leaves no truncated run behind.
	err := writeOutput(outPath, stdio.Stdout, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		for _, q := range queries {
			res, err := re.Search(ctx, q.q)
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
			prog.add(1)
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
