package cli

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/cmd/scalebench"
)

// cmdBenchCorpus is `kairos bench corpus`: writes the seeded synthetic passages that
// `kairos bench scale` measures (JSONL that kairos index reads), so that other measurements
// (an embedding build on a GPU, an anchor engine) can use the same collection. With --format
// mediawiki it writes them as articles of a Wikipedia multistream dump instead (wikitext in
// MediaWiki's XML export, 100 pages a bzip2 stream, with its index file), so that the dump
// path of kairos index (decompress, parse and clean, split) can be measured at any size.
func cmdBenchCorpus(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench corpus", "--passages N --out FILE [--format jsonl|mediawiki] [--seed S] [--shared DIR]", stdio.Stderr)
	passages := fs.String("passages", "", "passages to generate (k and m suffixes: 100k, 1m)")
	out := fs.String("out", "", "`file` to write: JSONL, or with --format mediawiki a .bz2 dump (named NAME-multistream.xml.bz2, its index NAME-multistream-index.txt.bz2 is written beside it)")
	format := fs.String("format", "jsonl", "jsonl (one passage a line) or mediawiki (a multistream .bz2 dump whose pages the indexer cleans and splits into the same number of passages)")
	seed := fs.Uint64("seed", scalebench.DefaultSeed, "generator seed (bench scale uses 1)")
	shared := fs.String("shared", defaultShared(), "shared data `directory` whose texts' statistics the passages follow")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *passages == "" || *out == "" {
		return usageErr(fs, "need --passages and --out, and no positional arguments")
	}
	if *format != "jsonl" && *format != "mediawiki" {
		return usageErr(fs, "--format %q: want jsonl or mediawiki", *format)
	}
	sizes, err := scalebench.ParseSizes(*passages)
	if err != nil || len(sizes) != 1 {
		return usageErr(fs, "--passages %q: want one size", *passages)
	}
	model, err := scalebench.LearnModel(ctx, *shared)
	if err != nil {
		return err
	}
	write := scalebench.WriteSynthetic
	if *format == "mediawiki" {
		write = scalebench.WriteSyntheticDump
	}
	if err := write(ctx, *out, model, sizes[0], *seed, stdio.Stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "wrote %d passages to %s\n", sizes[0], *out)
	return nil
}
