package scalebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/corpus/synthcorpus"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/dirsize"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
	"github.com/kairos-rag/kairos/internal/tty"
	"github.com/kairos-rag/kairos/search"
)

// Row is one collection's measurements.
type Row struct {
	Passages     int     `json:"passages"`
	Corpus       string  `json:"corpus"` // "synthetic seed S" or the input file
	CorpusBytes  int64   `json:"corpus_bytes"`
	GenerateS    float64 `json:"generate_s,omitempty"`
	BuildS       float64 `json:"build_s"`
	BuildPerS    float64 `json:"build_passages_per_s"`
	BuildPeakRSS int64   `json:"build_peak_rss_bytes"`
	// BuildSlowest is the rate of the slowest 30-second stretch of indexing (0: a shorter
	// build), BuildTailS the seconds from the last passage indexed to the build's end.
	BuildSlowest float64 `json:"build_slowest_passages_per_s"`
	BuildTailS   float64 `json:"build_tail_s"`
	// BuildProgress are the build's progress lines (passages indexed, seconds since its
	// start): its rate over time (--plot).
	BuildProgress []ProgressPoint `json:"build_progress,omitempty"`
	IndexBytes    int64           `json:"index_bytes"`
	Lexical       string          `json:"lexical_engine"` // as the built index's manifest names it
	Dense         bool            `json:"dense"`
	K             int             `json:"k"`
	BM25          Latency         `json:"bm25"`
	// BM25TopK is BM25 without document evidence: the engine computes exactly the top k, as
	// the anchors do, where BM25 (the default search) scores a window of
	// search.DefaultWindow candidates before it keeps k.
	BM25TopK      *Latency      `json:"bm25_top_k,omitempty"`
	DenseLatency  *Latency      `json:"dense_latency,omitempty"`
	HybridLatency *Latency      `json:"hybrid_latency,omitempty"`
	Xapian        *AnchorResult `json:"xapian,omitempty"`
	XapianNotRun  string        `json:"xapian_not_run,omitempty"`
	Lucene        *AnchorResult `json:"lucene,omitempty"`
	LuceneNotRun  string        `json:"lucene_not_run,omitempty"`
	// DenseEngines is the vector index against the dense anchors on the index's vectors
	// (Options.DenseEngines): one result per engine setting.
	DenseEngines []annbench.Result `json:"dense_engines,omitempty"`
	Load1        float64           `json:"load1"` // /proc/loadavg before the build: the machine is shared
	GOMAXPROCS   int               `json:"gomaxprocs"`
	// Incomplete is the error that stopped this collection after its Kairos build was
	// measured: the row holds what was measured before it (an anchor that failed is absent).
	Incomplete string `json:"incomplete,omitempty"`
}

// Measure runs o (as Run, whose checks and defaults it does not repeat: o.Work must exist and
// o.Kairos be set) and hands emit each size's row as soon as it is measured, so that a size
// that fails later (hours into a run) loses none before it. A size that fails after its
// Kairos build was measured is emitted too, with Incomplete set, before its error is returned.
func Measure(ctx context.Context, o Options, emit func(Row) error) error {
	cfg, stderr := o, o.Log
	if stderr == nil {
		stderr = io.Discard
	}
	prog := newProgress(stderr, tty.Is(stderr))
	queries, err := RealQueries(cfg.Shared, cfg.Queries)
	if err != nil {
		return fmt.Errorf("queries: %w", err)
	}
	queriesFile := filepath.Join(cfg.Work, "queries.jsonl")
	if err := writeQueries(queriesFile, queries); err != nil {
		return err
	}
	xapianNote := ""
	if cfg.Xapian == AnchorOff {
		xapianNote = "--xapian off"
	} else if xapianNote = xapianAvailable(ctx, cfg.Python); xapianNote != "" {
		fmt.Fprintf(stderr, "bench scale: the Xapian anchor does not run: %s\n", xapianNote)
	}
	if len(cfg.DenseEngines) > 0 {
		// Refused now, not after the first collection's build: an engine that is not
		// installed is named with the make target that installs it.
		if err := annbench.CheckEngines(ctx, cfg.denseOptions()); err != nil {
			return fmt.Errorf("--dense-engines: %w", err)
		}
	}
	anchors := scaleAnchors{xapianNote: xapianNote}
	if cfg.Lucene == AnchorOff {
		anchors.luceneNote = "--lucene off"
	} else if anchors.lucene, err = prepareLucene(ctx, cfg.Java, cfg.JarDir, cfg.CacheDir); err != nil {
		anchors.luceneNote = err.Error()
		fmt.Fprintf(stderr, "bench scale: the Lucene anchor does not run: %s\n", anchors.luceneNote)
	}
	var model *synthcorpus.Model
	if cfg.Input == "" {
		start := time.Now()
		if model, err = LearnModel(ctx, cfg.Shared); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench scale: term statistics of %d real words (Zipf s %.3f, tail mass %.4f) learned in %s\n",
			len(model.Words), model.ZipfS, model.TailMass, time.Since(start).Round(time.Millisecond))
	}
	sizes := cfg.Passages
	if cfg.Input != "" {
		sizes = []int{0}
	}
	for _, n := range sizes {
		row, err := scaleOne(ctx, cfg, model, n, queries, queriesFile, anchors, prog, stderr)
		if err != nil {
			if row.BuildS > 0 {
				row.Incomplete = err.Error()
				if eerr := emit(row); eerr != nil {
					return errors.Join(err, eerr)
				}
			}
			return err
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// scaleAnchors are the anchor engines that run beside Kairos, or why each does not.
type scaleAnchors struct {
	xapianNote string
	lucene     *lucene
	luceneNote string
}

// scaleOne measures one collection: generated with n passages, or cfg.Input when n is 0.
func scaleOne(ctx context.Context, cfg Options, model *synthcorpus.Model, n int, queries []string, queriesFile string, anchors scaleAnchors, prog *progress, stderr io.Writer) (Row, error) {
	row := Row{K: cfg.K, Dense: cfg.Model != "", XapianNotRun: anchors.xapianNote, LuceneNotRun: anchors.luceneNote,
		Load1: load1(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	dir := sizeDir(cfg.Work, n)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return row, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	input, format := cfg.Input, ""
	if n > 0 {
		input, format = filepath.Join(dir, "passages.jsonl"), "jsonl"
		start := time.Now()
		if err := writeSynthetic(ctx, input, model, synthcorpus.Options{Passages: n, Seed: cfg.Seed}, prog); err != nil {
			return row, err
		}
		row.GenerateS = time.Since(start).Seconds()
		row.Corpus = "synthetic seed " + strconv.FormatUint(cfg.Seed, 10)
	} else {
		row.Corpus = cfg.Input
	}
	if st, err := os.Stat(input); err == nil {
		row.CorpusBytes = st.Size()
	}
	idx := filepath.Join(dir, "index")
	args := indexArgs(cfg, input, format, idx)
	fmt.Fprintf(stderr, "bench scale: building %s (load %.2f)\n", input, row.Load1)
	b, err := buildIndex(ctx, cfg.Kairos, args, stderr)
	if err != nil {
		return row, err
	}
	row.Passages, row.BuildS, row.BuildPeakRSS = b.Passages, b.Wall.Seconds(), b.PeakRSS
	row.BuildSlowest, row.BuildTailS, row.BuildProgress = b.SlowestRate, b.Tail.Seconds(), b.Progress
	row.BuildPerS = float64(b.Passages) / b.Wall.Seconds()
	if n > 0 && b.Passages != n {
		return row, fmt.Errorf("generated %d passages, the index holds %d: the splitter cut or dropped records", n, b.Passages)
	}
	if row.IndexBytes, err = dirsize.Bytes(idx); err != nil {
		return row, err
	}
	if err := queryIndex(ctx, cfg, idx, queries, &row, prog); err != nil {
		return row, err
	}
	if len(cfg.DenseEngines) > 0 {
		fmt.Fprintf(stderr, "bench scale: the vector index against %v on the index's vectors (load %.2f)\n", cfg.DenseEngines, load1())
		rep, err := denseCompare(ctx, cfg, idx, queries, dir, stderr)
		if rep != nil {
			row.DenseEngines = rep.Results
		}
		if err != nil {
			return row, fmt.Errorf("dense engines: %w", err)
		}
	}
	if anchors.xapianNote != "" && anchors.lucene == nil {
		return row, nil
	}
	passages := input
	if n == 0 {
		passages = filepath.Join(dir, "passages.jsonl")
		if err := writeRealPassages(ctx, cfg.Kairos, cfg.Input, passages, stderr); err != nil {
			return row, err
		}
	}
	if anchors.xapianNote == "" {
		fmt.Fprintf(stderr, "bench scale: xapian on %s (load %.2f)\n", passages, load1())
		if row.Xapian, err = runXapian(ctx, cfg.Python, dir, passages, queriesFile, cfg.K, cfg.Warmup, stderr); err != nil {
			return row, err
		}
	}
	if anchors.lucene != nil {
		fmt.Fprintf(stderr, "bench scale: lucene on %s (load %.2f)\n", passages, load1())
		if row.Lucene, err = anchors.lucene.run(ctx, dir, passages, queriesFile, cfg.K, cfg.Warmup, row.GOMAXPROCS, stderr); err != nil {
			return row, err
		}
	}
	return row, nil
}

// indexArgs are the arguments of the `kairos index` child that builds input into idx: the
// lexical engine and, with a model, every embedding setting of o, so that the index is built
// as the queries will encode (a --dim or --precision left out would build vectors the query
// encoder does not match).
func indexArgs(o Options, input, format, idx string) []string {
	args := []string{"--force", "--input", input, "--index", idx}
	if format != "" {
		args = append(args, "--format", format)
	}
	if o.Lexical != "" {
		args = append(args, "--lexical", o.Lexical)
	}
	if o.Model == "" {
		return args
	}
	e := o.Embed
	args = append(args, "--model", o.Model, "--embed-batch", strconv.Itoa(e.BatchSize), "--device", e.Device.String())
	for _, f := range []struct{ name, value string }{
		{"--backend", e.Backend}, {"--precision", e.Precision}, // "": the child's default, as Flags registers it
		{"--ort-lib", e.ORTLib}, {"--ort-provider-lib", e.ORTProviderLib},
	} {
		if f.value != "" {
			args = append(args, f.name, f.value)
		}
	}
	if e.Dim != 0 {
		args = append(args, "--dim", strconv.Itoa(e.Dim))
	}
	return args
}

// WriteSynthetic writes opts.Passages synthetic passages following model (seeded, with topics
// when opts asks for them) as JSON lines that kairos index reads; log gets the progress lines
// (nil: none). opts.Progress is its own.
func WriteSynthetic(ctx context.Context, path string, model *synthcorpus.Model, opts synthcorpus.Options, log io.Writer) error {
	return writeSynthetic(ctx, path, model, opts, newProgress(log, tty.Is(log)))
}

func writeSynthetic(ctx context.Context, path string, model *synthcorpus.Model, opts synthcorpus.Options, prog *progress) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	start := time.Now()
	n := opts.Passages
	opts.Progress = func(done int) {
		prog.report("generating: %d/%d passages (%.0f/s)", done, n, float64(done)/time.Since(start).Seconds())
	}
	_, err = synthcorpus.Generate(ctx, f, model, opts)
	prog.done()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("generating %s: %w", path, err)
	}
	return nil
}

// writeRealPassages writes the passages of a real input (`kairos passages`) for the anchor;
// the child's messages go to progress, as an anchor's do (its reason for failing among them:
// the error alone said "exit status 1" when the disk filled at 40M).
func writeRealPassages(ctx context.Context, kairos, input, path string, progress io.Writer) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, kairos, "passages", "--input", input)
	cmd.Stdout, cmd.Stderr = f, progress
	err = cmd.Run()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s passages --input %s: %w", kairos, input, err)
	}
	return nil
}

func queryIndex(ctx context.Context, cfg Options, idx string, queries []string, row *Row, prog *progress) error {
	var opts search.Options
	if cfg.Model != "" {
		eo := cfg.Embed
		eo.ModelDir, eo.NoSpin = cfg.Model, true // query encoding between BM25 work: see embed.Options.NoSpin
		enc, err := embed.OpenEncoder(ctx, eo)
		if err != nil {
			return fmt.Errorf("opening model %s: %w", cfg.Model, err)
		}
		defer enc.Close()
		opts.Encoder = queryEncoder{enc}
	}
	ix, err := search.Open(ctx, indexer.Location{Dir: idx}, opts)
	if err != nil {
		return fmt.Errorf("opening %s: %w", idx, err)
	}
	defer ix.Close()
	row.Lexical = ix.Manifest().LexicalEngine()
	if row.BM25, err = timeQueries(ctx, ix, search.ModeBM25, queries, cfg.K, cfg.Warmup, prog); err != nil {
		return err
	}
	if cfg.K < search.DefaultWindow {
		topK, err := search.Open(ctx, indexer.Location{Dir: idx}, search.Options{DocEvidence: -1})
		if err != nil {
			return fmt.Errorf("opening %s: %w", idx, err)
		}
		l, err := timeQueries(ctx, topK, search.ModeBM25, queries, cfg.K, cfg.Warmup, prog)
		topK.Close()
		if err != nil {
			return fmt.Errorf("top k: %w", err)
		}
		row.BM25TopK = &l
	}
	if cfg.Model == "" {
		return nil
	}
	d, err := timeQueries(ctx, ix, search.ModeDense, queries, cfg.K, cfg.Warmup, prog)
	if err != nil {
		return err
	}
	h, err := timeQueries(ctx, ix, search.ModeHybrid, queries, cfg.K, cfg.Warmup, prog)
	if err != nil {
		return err
	}
	row.DenseLatency, row.HybridLatency = &d, &h
	return nil
}

// load1 is the one-minute load average (0 where /proc/loadavg is missing): figures taken on a
// shared machine are only comparable at similar load.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscanf(string(b), "%f", &l)
	return l
}

// queryEncoder embeds queries for search with an embed.Encoder.
type queryEncoder struct{ enc *embed.Encoder }

var _ search.QueryEncoder = queryEncoder{}

func (e queryEncoder) Identity() indexer.ModelIdentity { return e.enc.Info().Identity }

func (e queryEncoder) EncodeQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.enc.Encode(ctx, embed.Query, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}
