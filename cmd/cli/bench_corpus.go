package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kairos-rag/kairos/cmd/scalebench"
	"github.com/kairos-rag/kairos/corpus/synthcorpus"
)

// cmdBenchCorpus is `kairos bench corpus`: writes the seeded synthetic passages that
// `kairos bench scale` measures (JSONL that kairos index reads), so that other measurements
// (an embedding build on a GPU, an anchor engine) can use the same collection. With --format
// mediawiki it writes them as articles of a Wikipedia multistream dump instead (wikitext in
// MediaWiki's XML export, 100 pages a bzip2 stream, with its index file), so that the dump
// path of kairos index (decompress, parse and clean, split) can be measured at any size.
// --topics N gives the passages N topics (synthcorpus.TopicOf), and --topic-model DIR writes
// beside them a static model whose rows carry those topics, so that dense search can be
// measured on vectors that cluster as real ones do (scalebench.WriteTopicModel).
func cmdBenchCorpus(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("bench corpus", "--passages N --out FILE [--format jsonl|mediawiki] [--seed S] [--shared DIR] [--topics N [--topic-model DIR [--topic-dim D] [--topic-noise X]]]", stdio.Stderr)
	passages := fs.String("passages", "", "passages to generate (k and m suffixes: 100k, 1m)")
	out := fs.String("out", "", "`file` to write: JSONL, or with --format mediawiki a .bz2 dump (named NAME-multistream.xml.bz2, its index NAME-multistream-index.txt.bz2 is written beside it)")
	format := fs.String("format", "jsonl", "jsonl (one passage a line) or mediawiki (a multistream .bz2 dump whose pages the indexer cleans and splits into the same number of passages)")
	seed := fs.Uint64("seed", scalebench.DefaultSeed, "generator seed (bench scale uses 1)")
	shared := fs.String("shared", defaultShared(), "shared data `directory` whose texts' statistics the passages follow")
	topics := fs.Int("topics", 0, "give the passages this many topics: each document draws two, and half its words come from them (0: words independent, as bench scale generates)")
	topicModel := fs.String("topic-model", "", "with --topics: also write a static model (Model2Vec layout) whose rows carry the topics into this `folder`, for measuring dense search; its vectors mean nothing for real text")
	topicDim := fs.Int("topic-dim", 256, "with --topic-model: the model's dimension")
	topicNoise := fs.Float64("topic-noise", scalebench.DefaultTopicNoise, "with --topic-model: each row's random part relative to its topic part")
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
	if *topicModel != "" && *topics < 1 {
		return usageErr(fs, "--topic-model needs --topics")
	}
	if *topics != 0 && *format != "jsonl" {
		return usageErr(fs, "--topics: only with --format jsonl")
	}
	sizes, err := scalebench.ParseSizes(*passages)
	if err != nil || len(sizes) != 1 {
		return usageErr(fs, "--passages %q: want one size", *passages)
	}
	model, err := scalebench.LearnModel(ctx, *shared)
	if err != nil {
		return err
	}
	if *topicModel != "" {
		err := scalebench.WriteTopicModel(ctx, *topicModel, model, scalebench.TopicModelOptions{
			Topics: *topics, Dim: *topicDim, Noise: *topicNoise, Seed: *seed,
			Tokenizer: filepath.Join(*shared, scalebench.TopicTokenizer),
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdio.Stdout, "wrote a %d-topic static model to %s\n", *topics, *topicModel)
	}
	if *format == "mediawiki" {
		err = scalebench.WriteSyntheticDump(ctx, *out, model, sizes[0], *seed, stdio.Stderr)
	} else {
		err = scalebench.WriteSynthetic(ctx, *out, model, synthcorpus.Options{Passages: sizes[0], Seed: *seed, Topics: *topics}, stdio.Stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "wrote %d passages to %s\n", sizes[0], *out)
	return nil
}
