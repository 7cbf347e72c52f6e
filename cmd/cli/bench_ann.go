package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// cmdBenchANN is `kairos bench ann`: recall@10 against exact search and single-thread QPS of the
// HNSW index on synthetic clustered unit vectors (see package annbench for how they are drawn),
// or, with --engines, of every engine named on the same vectors (annbench.Compare).
func cmdBenchANN(ctx context.Context, args []string, stdio IO) error {
	// Builds the HNSW index on N clustered unit vectors (200 Gaussian centres, noise sigma 0.8,
	// seeded), prints the build time, and for each ef the recall@10 against exact search and
	// single-thread queries/s.
	fs := newFlags("bench ann", "[--n N] [--dim D] [--queries Q] [--ef LIST] [--m M] [--efc EFC] [--seed S] [--json] [--dump DIR] [--save FILE] [--mapped] [--binary] [--rescore R] [--build float|codes] [--model DIR [--topics N] [--shared DIR]] | --load FILE --data DIR [--mapped] | --engines LIST [--plot FILE.svg] [--work DIR [--keep]] [data flags | --data DIR]", stdio.Stderr)
	var (
		cfg    annbench.Config
		efList string
		asJSON bool
		lcfg   annbench.LoadedConfig
		co     annbench.CompareOptions
		plot   string
	)
	co.Flags(fs)
	fs.StringVar(&plot, "plot", "", "with --engines: also draw recall@10 against queries/s of every engine as an SVG `file`")
	fs.IntVar(&cfg.N, "n", 50000, "base vectors")
	fs.IntVar(&cfg.Dim, "dim", 384, "dimension")
	fs.IntVar(&cfg.Queries, "queries", 1000, "query vectors (drawn like the base set, not from it)")
	fs.StringVar(&efList, "ef", "16,24,32,48,64,96,128", "comma-separated search ef values")
	fs.IntVar(&cfg.M, "m", hnsw.DefaultM, "HNSW M (level 0 keeps 2*M)")
	fs.IntVar(&cfg.EfC, "efc", hnsw.DefaultEfConstruction, "HNSW efConstruction")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed for data and graph")
	fs.IntVar(&cfg.Workers, "workers", 0, "build goroutines (0: GOMAXPROCS)")
	fs.IntVar(&cfg.Repeat, "repeat", 3, "timed passes per ef; the best QPS is reported")
	fs.BoolVar(&asJSON, "json", false, `one JSON line per ef: {"ef","recall_at_10","qps","qps_cpu","build_seconds","n","dim",...}`)
	fs.StringVar(&cfg.Dump, "dump", "", "write base.f32, queries.f32, gt.i32 and meta.json here (the engines' input: bench ann-engine and internal/hnsw/bench's anchor scripts read it)")
	fs.StringVar(&cfg.Save, "save", "", "save the built graph to FILE (for --load)")
	fs.BoolVar(&cfg.Mapped, "mapped", false, "also measure the graph saved and loaded memory-mapped (int8 codes, float rescoring); with --load: load it mapped")
	fs.IntVar(&cfg.Rescore, "rescore", 0, "mapped search: candidates rescored with float vectors (0: 2*k)")
	fs.BoolVar(&cfg.Binary, "binary", false, "also measure the graph saved with binary codes and loaded mapped (Hamming walk, int8 then float rescoring); with --save, its file is FILE.binary")
	fs.StringVar(&cfg.BinaryRescore, "binary-rescore", "", "binary codes: rescore the walk's candidates with int8 codes, then floats (int8, the default) or with floats only (float: the codes stay out of resident memory)")
	fs.StringVar(&cfg.BinaryWalk, "binary-walk", "", "binary codes: score the walk's nodes by the float query summed over each node's set bits (asymmetric, the default) or by Hamming distance to the query's bits (hamming)")
	fs.StringVar(&cfg.Build, "build", "", "what the graph is built from: float (the default: float32 vectors in memory) or codes (one byte per dimension in memory, as kairos index builds its graphs; the floats spill to a temporary file)")
	model := fs.String("model", "", "instead of clustered Gaussian vectors: --n synthetic passages and --queries real queries embedded with this sentence encoder `folder` (--dim is the model's)")
	topics := fs.Int("topics", 0, "with --model: passages with this many topics, queried by passages of other documents of the same topics (for a model written by kairos bench corpus --topic-model with the same --topics); 0: real queries")
	shared := fs.String("shared", defaultShared(), "with --model: the shared data `directory` (the texts the synthetic passages follow, the queries)")
	fs.StringVar(&lcfg.Index, "load", "", "measure the graph FILE saved by --save instead of building: load time, VmRSS/VmHWM, recall, QPS")
	fs.StringVar(&lcfg.Data, "data", "", "with --load: the --dump directory of the run that saved it (queries and ground truth); with --engines: compare the engines on the vectors dumped in this `directory` instead of making new ones")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected argument %q", pos[0])
	}
	efs, err := parseEfList(efList)
	if err != nil {
		return usageErr(fs, "--ef: %v", err)
	}
	cfg.Efs = efs
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["engines"] {
		return benchANNCompare(ctx, fs, set, cfg, co, *model, *shared, *topics, lcfg.Data, plot, asJSON, stdio)
	}
	for _, name := range []string{"plot", "work", "keep"} {
		if set[name] {
			return usageErr(fs, "--%s needs --engines", name)
		}
	}
	if lcfg.Data != "" && lcfg.Index == "" {
		return usageErr(fs, "--data needs --load or --engines")
	}
	if lcfg.Index != "" {
		if lcfg.Data == "" {
			return usageErr(fs, "--load needs --data")
		}
		lcfg.Mapped, lcfg.Rescore, lcfg.Efs, lcfg.Repeat = cfg.Mapped, cfg.Rescore, efs, cfg.Repeat
		lcfg.BinaryRescore, lcfg.BinaryWalk = cfg.BinaryRescore, cfg.BinaryWalk
		rows, err := annbench.RunLoaded(ctx, lcfg, stdio.Stderr)
		if err != nil {
			return fmt.Errorf("bench ann: %w", err)
		}
		return writeANNRows(stdio.Stdout, rows, asJSON)
	}
	if *model != "" {
		cfg.Dim = 1 // the model's, set by RunData
	}
	if *topics != 0 && (*model == "" || *topics < 0) {
		return usageErr(fs, "--topics %d: needs --model and a positive count", *topics)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr(fs, "%v", err)
	}
	var rows []annbench.Row
	if *model != "" {
		ds, derr := annModelDataset(ctx, *model, *shared, cfg.N, cfg.Queries, *topics, uint64(cfg.Seed), stdio.Stderr)
		if derr != nil {
			return fmt.Errorf("bench ann: %w", derr)
		}
		rows, err = annbench.RunData(ctx, ds, cfg, stdio.Stderr)
	} else {
		rows, err = annbench.Run(ctx, cfg, stdio.Stderr)
	}
	if err != nil {
		return fmt.Errorf("bench ann: %w", err)
	}
	return writeANNRows(stdio.Stdout, rows, asJSON)
}

func writeANNRows(w io.Writer, rows []annbench.Row, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "n %d, dim %d, build %.2f s\n%6s %12s %10s %10s %8s %8s %8s %8s %8s\n", rows[0].N, rows[0].Dim, rows[0].BuildSeconds,
		"ef", "recall@10", "QPS", "QPS/CPU-s", "mode", "load s", "RSS MB", "HWM MB", "+RSS MB")
	for _, r := range rows {
		mode := r.Mode
		if mode == "" {
			mode = "built"
		}
		growth := "-"
		if r.GrowthMB != nil {
			growth = fmt.Sprintf("%.0f", *r.GrowthMB)
		}
		if _, err := fmt.Fprintf(w, "%6d %12.4f %10.0f %10.0f %8s %8.2f %8.0f %8.0f %8s\n", r.Ef, r.Recall, r.QPS, r.CPUQPS, mode, r.LoadSeconds, r.RSSMB, r.HWMMB, growth); err != nil {
			return err
		}
	}
	return nil
}

// parseEfList parses "16,32,64": positive integers.
func parseEfList(s string) ([]int, error) { return parseIntList(s, 1) }

// parseIntList parses comma-separated integers of at least least.
func parseIntList(s string, least int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < least {
			return nil, fmt.Errorf("%q is not an integer of at least %d", f, least)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}
