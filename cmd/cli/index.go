package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
)

// Version is the program version recorded in manifests.
const Version = "0.1.0-dev"

func cmdIndex(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("index", "--input PATH... --index DIR [flags]", stdio.Stderr)
	var inputs stringList
	fs.Var(&inputs, "input", "corpus `file` (repeatable; also positional)")
	dir := fs.String("index", "", "index `directory` (created; an existing index stays live until the new one is complete)")
	format := fs.String("format", "", "force the input format (mediawiki, enterprise, wikiextractor, jsonl, faq-csv, faq-json, faq-jsonl); default: detect")
	source := fs.String("source", "", "source name stored with every passage (default: input file name)")
	skipBad := fs.Bool("skip-bad", false, "skip malformed records (counted and listed) instead of failing")
	maxWords := fs.Int("max-words", 120, "passage size limit in words, title prefix included")
	batch := fs.Int("batch", 5000, "passages per index batch")
	quiet := fs.Bool("quiet", false, "no progress line")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs = append(inputs, pos...)
	if len(inputs) == 0 || *dir == "" {
		return usageErr(fs, "need --input and --index")
	}
	opts := indexer.Options{
		Dir:     *dir,
		Build:   indexer.BuildOptions{MaxWords: *maxWords, BatchSize: *batch},
		SkipBad: *skipBad,
		Version: Version,
	}
	for _, in := range inputs {
		opts.Inputs = append(opts.Inputs, indexer.InputSpec{Path: in, Options: corpus.Options{Format: *format, Source: *source}})
	}
	if !*quiet {
		opts.Progress = stdio.Stderr
	}
	sum, err := indexer.Build(ctx, opts)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	printSummary(stdio, sum)
	return nil
}

func printSummary(stdio IO, s *indexer.Summary) {
	c := s.Counts
	w := stdio.Stdout
	fmt.Fprintf(w, "index       %s (generation %d)\n", s.Dir, s.Generation)
	fmt.Fprintf(w, "documents   %d\n", c.Documents)
	fmt.Fprintf(w, "passages    %d\n", c.Passages)
	reasons := make([]string, 0, len(c.Skipped))
	for r := range c.Skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "skipped     %d %s\n", c.Skipped[r], r)
	}
	if c.Bad > 0 {
		fmt.Fprintf(w, "bad         %d malformed records skipped\n", c.Bad)
		for _, b := range s.BadRecords {
			fmt.Fprintf(w, "  %s\n", b)
		}
		if c.Bad > len(s.BadRecords) {
			fmt.Fprintf(w, "  ... and %d more\n", c.Bad-len(s.BadRecords))
		}
	}
	if c.Repaired > 0 {
		fmt.Fprintf(w, "repaired    %d records with invalid UTF-8\n", c.Repaired)
	}
	fmt.Fprintf(w, "seconds     %.2f\n", s.Elapsed.Seconds())
	fmt.Fprintf(w, "passages/s  %.0f\n", s.PassagesPerSecond())
}
