package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
)

func cmdPassages(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("passages", "--input PATH... [flags]", stdio.Stderr)
	var inputs stringList
	fs.Var(&inputs, "input", "corpus `file` (repeatable; also positional)")
	format := fs.String("format", "", "force the input format; default: detect")
	source := fs.String("source", "", "source name (default: input file name)")
	skipBad := fs.Bool("skip-bad", false, "skip malformed records (reported on stderr) instead of failing")
	maxWords := fs.Int("max-words", corpus.DefaultMaxWords, "passage size limit in words, title prefix included")
	var inf inputFlags
	inf.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs = append(inputs, pos...)
	if len(inputs) == 0 {
		return usageErr(fs, "need --input")
	}
	if err := inf.check(fs); err != nil {
		return err
	}
	split, err := corpus.NewSplitter(corpus.SplitOptions{MaxWords: *maxWords})
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(stdio.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, in := range inputs {
		if err := writePassages(ctx, in, inf.options(*format, *source), *skipBad, split, enc, stdio.Stderr); err != nil {
			out.Flush()
			return fmt.Errorf("passages: %w", err)
		}
	}
	return out.Flush()
}

func writePassages(ctx context.Context, path string, opts corpus.Options, skipBad bool, split *corpus.Splitter, enc *json.Encoder, stderr io.Writer) error {
	r, err := corpus.Open(ctx, path, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	pr := corpus.NewPassageReader(ctx, r, split, corpus.PassageReaderOptions{Workers: opts.Workers})
	defer pr.Close() // before r.Close: it stops the goroutine that reads r
	n := 0
	for {
		_, ps, err := pr.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			if skipBad && corpus.IsRecordError(err) {
				fmt.Fprintf(stderr, "skipped: %v\n", err)
				continue
			}
			return fmt.Errorf("%w%s", err, skipBadHint(err, skipBad))
		}
		for _, p := range ps {
			if err := enc.Encode(&p); err != nil {
				return err
			}
			n++
		}
	}
	st := pr.Stats()
	fmt.Fprintf(stderr, "%s: %s\n", path, passageCounts(st.Documents, n, st.Skipped, st.Bad, st.Repaired, st.URLsRemoved))
	if len(st.Languages) > 1 {
		// kairos index refuses such an input unless told how to analyse it: say so here,
		// where the input is previewed, rather than at the build.
		var langs []string
		for _, l := range slices.Sorted(maps.Keys(st.Languages)) {
			langs = append(langs, fmt.Sprintf("%s %d", l, st.Languages[l]))
		}
		fmt.Fprintf(stderr, "%s: documents in %d languages (%s): kairos index needs --language multilingual to analyse each in its own, or --language CODE to analyse all as one\n",
			path, len(st.Languages), strings.Join(langs, ", "))
	}
	if len(st.Columns) > 0 {
		fmt.Fprintf(stderr, "%s: columns used %v\n", path, st.Columns)
	}
	return nil
}

// passageCounts says what an input gave: documents and passages, then only the counts that are
// not zero, the skipped by reason ("skipped 99 redirects, 1 namespace").
func passageCounts(docs, passages int, skipped map[string]int, bad, repaired, urls int) string {
	parts := []string{plural(docs, "document"), plural(passages, "passage")}
	if len(skipped) > 0 {
		var why []string
		for _, r := range slices.Sorted(maps.Keys(skipped)) {
			why = append(why, fmt.Sprintf("%d %s", skipped[r], r))
		}
		parts = append(parts, "skipped "+strings.Join(why, ", "))
	}
	if bad > 0 {
		parts = append(parts, plural(bad, "malformed record")+" skipped (--skip-bad)")
	}
	if repaired > 0 {
		parts = append(parts, plural(repaired, "record")+" with invalid UTF-8 repaired")
	}
	if urls > 0 {
		parts = append(parts, plural(urls, "URL")+" removed (not http or https)")
	}
	return strings.Join(parts, ", ")
}
