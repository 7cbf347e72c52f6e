package cli

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/internal/scalebench"
)

// cmdBenchCorpus is `kairos bench corpus`: writes the seeded synthetic passages that
// `kairos bench scale` measures (JSONL that kairos index reads), so that other measurements
// (an embedding build on a GPU, an anchor engine) can use the same collection.
func cmdBenchCorpus(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench corpus", "--passages N --out FILE [--seed S] [--shared DIR]", stdio.Stderr)
	passages := fs.String("passages", "", "passages to generate (k and m suffixes: 100k, 1m)")
	out := fs.String("out", "", "JSONL `file` to write")
	seed := fs.Uint64("seed", scalebench.DefaultSeed, "generator seed (bench scale uses 1)")
	shared := fs.String("shared", defaultShared(), "shared data `directory` whose texts' statistics the passages follow")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *passages == "" || *out == "" {
		return usageErr(fs, "need --passages and --out, and no positional arguments")
	}
	sizes, err := scalebench.ParseSizes(*passages)
	if err != nil || len(sizes) != 1 {
		return usageErr(fs, "--passages %q: want one size", *passages)
	}
	model, err := scalebench.LearnModel(ctx, *shared)
	if err != nil {
		return err
	}
	if err := scalebench.WriteSynthetic(ctx, *out, model, sizes[0], *seed, stdio.Stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "wrote %d passages to %s\n", sizes[0], *out)
	return nil
}
