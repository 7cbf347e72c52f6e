package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/internal/synthcorpus"
	"github.com/kairos-rag/kairos/internal/tty"
	"github.com/kairos-rag/kairos/search"
)

// scaleRow is one collection's measurements.
type scaleRow struct {
	Passages     int     `json:"passages"`
	Corpus       string  `json:"corpus"` // "synthetic seed S" or the input file
	CorpusBytes  int64   `json:"corpus_bytes"`
	GenerateS    float64 `json:"generate_s,omitempty"`
	BuildS       float64 `json:"build_s"`
	BuildPerS    float64 `json:"build_passages_per_s"`
	BuildPeakRSS int64   `json:"build_peak_rss_bytes"`
	// BuildSlowest is the rate of the slowest 30-second stretch of indexing (0: a shorter
	// build), BuildTailS the seconds from the last passage indexed to the build's end.
	BuildSlowest  float64       `json:"build_slowest_passages_per_s"`
	BuildTailS    float64       `json:"build_tail_s"`
	IndexBytes    int64         `json:"index_bytes"`
	Lexical       string        `json:"lexical_engine"` // as the built index's manifest names it
	Dense         bool          `json:"dense"`
	K             int           `json:"k"`
	BM25          latency       `json:"bm25"`
	DenseLatency  *latency      `json:"dense_latency,omitempty"`
	HybridLatency *latency      `json:"hybrid_latency,omitempty"`
	Xapian        *anchorResult `json:"xapian,omitempty"`
	XapianNotRun  string        `json:"xapian_not_run,omitempty"`
	Lucene        *anchorResult `json:"lucene,omitempty"`
	LuceneNotRun  string        `json:"lucene_not_run,omitempty"`
	Load1         float64       `json:"load1"` // /proc/loadavg before the build: the machine is shared
	GOMAXPROCS    int           `json:"gomaxprocs"`
}

func runScale(ctx context.Context, cfg scaleConfig, stderr io.Writer) ([]scaleRow, error) {
	prog := newScaleProgress(stderr, tty.Is(stderr))
	queries, err := scaleQueries(cfg.Shared, cfg.Queries)
	if err != nil {
		return nil, fmt.Errorf("queries: %w", err)
	}
	queriesFile := filepath.Join(cfg.Work, "queries.jsonl")
	if err := writeQueries(queriesFile, queries); err != nil {
		return nil, err
	}
	xapianNote := ""
	if cfg.Xapian == "off" {
		xapianNote = "--xapian off"
	} else if xapianNote = xapianAvailable(ctx, cfg.Python); xapianNote != "" {
		fmt.Fprintf(stderr, "bench scale: the Xapian anchor does not run: %s\n", xapianNote)
	}
	anchors := scaleAnchors{xapianNote: xapianNote}
	if cfg.Lucene == "off" {
		anchors.luceneNote = "--lucene off"
	} else if anchors.lucene, err = prepareLucene(ctx, cfg.Java, cfg.JarDir, cfg.CacheDir); err != nil {
		anchors.luceneNote = err.Error()
		fmt.Fprintf(stderr, "bench scale: the Lucene anchor does not run: %s\n", anchors.luceneNote)
	}
	var model *synthcorpus.Model
	if cfg.Input == "" {
		start := time.Now()
		if model, err = learnScaleModel(ctx, cfg.Shared); err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "bench scale: term statistics of %d real words (Zipf s %.3f, tail mass %.4f) learned in %s\n",
			len(model.Words), model.ZipfS, model.TailMass, time.Since(start).Round(time.Millisecond))
	}
	sizes := cfg.Passages
	if cfg.Input != "" {
		sizes = []int{0}
	}
	var rows []scaleRow
	for _, n := range sizes {
		row, err := scaleOne(ctx, cfg, model, n, queries, queriesFile, anchors, prog, stderr)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// scaleAnchors are the anchor engines that run beside Kairos, or why each does not.
type scaleAnchors struct {
	xapianNote string
	lucene     *lucene
	luceneNote string
}

// scaleOne measures one collection: generated with n passages, or cfg.Input when n is 0.
func scaleOne(ctx context.Context, cfg scaleConfig, model *synthcorpus.Model, n int, queries []string, queriesFile string, anchors scaleAnchors, prog *scaleProgress, stderr io.Writer) (scaleRow, error) {
	row := scaleRow{K: cfg.K, Dense: cfg.Models.model != "", XapianNotRun: anchors.xapianNote, LuceneNotRun: anchors.luceneNote,
		Load1: load1(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	dir := scaleDir(cfg.Work, n)
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
		if err := writeSynthetic(ctx, input, model, n, cfg.Seed, prog); err != nil {
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
	args := []string{"--force", "--input", input, "--index", idx}
	if format != "" {
		args = append(args, "--format", format)
	}
	if cfg.Lexical != "" {
		args = append(args, "--lexical", cfg.Lexical)
	}
	if m := cfg.Models; m.model != "" {
		args = append(args, "--model", m.model, "--backend", m.rt.Backend, "--embed-batch", strconv.Itoa(m.rt.BatchSize),
			"--device", m.rt.Device.String())
		if m.rt.ORTLib != "" {
			args = append(args, "--ort-lib", m.rt.ORTLib)
		}
		if m.rt.ORTProviderLib != "" {
			args = append(args, "--ort-provider-lib", m.rt.ORTProviderLib)
		}
	}
	fmt.Fprintf(stderr, "bench scale: building %s (load %.2f)\n", input, row.Load1)
	b, err := buildIndex(ctx, cfg.Kairos, args, stderr)
	if err != nil {
		return row, err
	}
	row.Passages, row.BuildS, row.BuildPeakRSS = b.Passages, b.Wall.Seconds(), b.PeakRSS
	row.BuildSlowest, row.BuildTailS = b.SlowestRate, b.Tail.Seconds()
	row.BuildPerS = float64(b.Passages) / b.Wall.Seconds()
	if n > 0 && b.Passages != n {
		return row, fmt.Errorf("generated %d passages, the index holds %d: the splitter cut or dropped records", n, b.Passages)
	}
	if row.IndexBytes, err = dirBytes(idx); err != nil {
		return row, err
	}
	if err := queryIndex(ctx, cfg, idx, queries, &row, prog); err != nil {
		return row, err
	}
	if anchors.xapianNote != "" && anchors.lucene == nil {
		return row, nil
	}
	passages := input
	if n == 0 {
		passages = filepath.Join(dir, "passages.jsonl")
		if err := writeRealPassages(ctx, cfg.Kairos, cfg.Input, passages); err != nil {
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
		if row.Lucene, err = anchors.lucene.run(ctx, dir, passages, queriesFile, cfg.K, cfg.Warmup, stderr); err != nil {
			return row, err
		}
	}
	return row, nil
}

func writeSynthetic(ctx context.Context, path string, model *synthcorpus.Model, n int, seed uint64, prog *scaleProgress) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	start := time.Now()
	_, err = synthcorpus.Generate(ctx, f, model, synthcorpus.Options{Passages: n, Seed: seed, Progress: func(done int) {
		prog.report("generating: %d/%d passages (%.0f/s)", done, n, float64(done)/time.Since(start).Seconds())
	}})
	prog.done()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("generating %s: %w", path, err)
	}
	return nil
}

// writeRealPassages writes the passages of a real input (`kairos passages`) for the anchor.
func writeRealPassages(ctx context.Context, kairos, input, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, kairos, "passages", "--input", input)
	cmd.Stdout = f
	err = cmd.Run()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s passages --input %s: %w", kairos, input, err)
	}
	return nil
}

func queryIndex(ctx context.Context, cfg scaleConfig, idx string, queries []string, row *scaleRow, prog *scaleProgress) error {
	var opts search.Options
	if cfg.Models.model != "" {
		enc, err := openEncoder(ctx, &cfg.Models, nil)
		if err != nil {
			return err
		}
		defer enc.Close()
		opts.Encoder = enc
	}
	ix, err := search.Open(ctx, idx, opts)
	if err != nil {
		return fmt.Errorf("opening %s: %w", idx, err)
	}
	defer ix.Close()
	row.Lexical = ix.Manifest().LexicalEngine()
	if row.BM25, err = timeQueries(ctx, ix, search.ModeBM25, queries, cfg.K, cfg.Warmup, prog); err != nil {
		return err
	}
	if cfg.Models.model == "" {
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
