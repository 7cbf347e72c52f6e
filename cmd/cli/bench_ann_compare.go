package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

// benchANNCompare is `kairos bench ann --engines LIST`: the data set of the other flags (clustered
// Gaussians, --model's passages, or the vectors --data's dump holds), then every engine named
// built and served on it by its own child processes (annbench.Compare, CompareDump), and the
// table or JSON lines, and the plot.
func benchANNCompare(ctx context.Context, fs *flag.FlagSet, set map[string]bool, cfg annbench.Config, co annbench.CompareOptions,
	model, shared string, topics int, data, plot string, asJSON bool, stdio IO) error {
	// The flags of a single in-process graph mean nothing here: each engine builds its own.
	for _, name := range []string{"dump", "save", "mapped", "binary", "rescore", "binary-rescore", "binary-walk", "build", "load"} {
		if set[name] {
			return usageErr(fs, "--%s is not for --engines (the dump and indexes are under --work; keep them with --keep)", name)
		}
	}
	co.M, co.EfC, co.Seed, co.Repeat, co.Threads = cfg.M, cfg.EfC, cfg.Seed, cfg.Repeat, cfg.Workers
	if set["ef"] {
		co.Efs = cfg.Efs
	}
	co.SetDefaults()
	if err := co.Validate(); err != nil {
		return usageErr(fs, "%v", err)
	}
	if data != "" {
		// The dump fixes the vectors: the flags that would make them are refused, not ignored.
		for _, name := range []string{"n", "dim", "queries", "model", "topics", "shared"} {
			if set[name] {
				return usageErr(fs, "--%s is not for --data (the dump's vectors are compared; leave --data out to make new ones)", name)
			}
		}
		co.Log = stdio.Stderr
		co.Data = "the vectors dumped in " + filepath.Base(filepath.Clean(data))
		rep, err := annbench.CompareDump(ctx, data, co, emitJSON(asJSON, stdio))
		return finishCompare(rep, err, plot, asJSON, stdio)
	}
	if model != "" {
		cfg.Dim = 1 // the model's
	}
	if topics != 0 && (model == "" || topics < 0) {
		return usageErr(fs, "--topics %d: needs --model and a positive count", topics)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr(fs, "%v", err)
	}
	co.Log = stdio.Stderr
	var ds annbench.Dataset
	if model != "" {
		var err error
		if ds, err = annModelDataset(ctx, model, shared, cfg.N, cfg.Queries, topics, uint64(cfg.Seed), stdio.Stderr); err != nil {
			return fmt.Errorf("bench ann: %w", err)
		}
		co.Data = "passages embedded with " + model
		if topics > 0 {
			co.Data = fmt.Sprintf("topic fixture (%d topics) embedded with %s", topics, model)
		}
	} else {
		ds = annbench.Generate(cfg.N, cfg.Queries, cfg.Dim, cfg.Seed)
		co.Data = fmt.Sprintf("clustered Gaussians (%d centres, seed %d)", annbench.Centres, cfg.Seed)
	}
	rep, err := annbench.Compare(ctx, &ds, co, emitJSON(asJSON, stdio))
	return finishCompare(rep, err, plot, asJSON, stdio)
}

// emitJSON writes each result as a JSON line as soon as it is measured (with --json).
func emitJSON(asJSON bool, stdio IO) func(annbench.Result) error {
	return func(r annbench.Result) error {
		if !asJSON {
			return nil
		}
		return annbench.WriteReport(stdio.Stdout, &annbench.Report{RunInfo: r.RunInfo, Results: []annbench.Result{r}}, true)
	}
}

// finishCompare writes the table (without --json) and the plot of what rep holds, even when
// err stopped the comparison part way.
func finishCompare(rep *annbench.Report, err error, plot string, asJSON bool, stdio IO) error {
	if rep != nil && !asJSON {
		if werr := annbench.WriteReport(stdio.Stdout, rep, false); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if rep != nil && plot != "" && len(rep.Results) > 0 {
		if perr := atomicfile.Write(plot, atomicfile.Options{}, func(w io.Writer) error { return annbench.WritePlot(w, rep) }); perr != nil {
			err = errors.Join(err, fmt.Errorf("--plot: %w", perr))
		}
	}
	if err != nil {
		return fmt.Errorf("bench ann: %w", err)
	}
	return nil
}
