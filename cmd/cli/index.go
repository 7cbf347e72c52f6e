package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/memlimit"
)

func cmdIndex(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("index", "--input PATH... --index LOCATION [flags]", stdio.Stderr)
	var inputs stringList
	fs.Var(&inputs, "input", "corpus `file` (repeatable; also positional); - reads standard input")
	var loc indexer.Location
	loc.Flag(fs, "a directory is created; an existing index stays live until the new one is complete")
	format := fs.String("format", "", "force the input format (mediawiki, enterprise, wikiextractor, jsonl, faq-csv, faq-json, faq-jsonl); default: detect")
	source := fs.String("source", "", "source name stored with every passage (default: input file name)")
	quiet := fs.Bool("quiet", false, "print nothing but warnings and errors: no progress line, no summary")
	var in inputFlags
	in.register(fs)
	var lf logFlags
	lf.register(fs, "warn")
	update := fs.Bool("update", false, "update the index at --index from newer inputs: add new documents, replace changed ones, keep unchanged ones (not re-embedded)")
	resume := fs.Bool("resume", false, "continue an interrupted build from its checkpoint (same inputs and options)")
	force := fs.Bool("force", false, "replace the index already at --index with a new build (the old one stays live until the new one commits)")
	// The library's options register their own flags, with the defaults it applies.
	var uo indexer.UpdateOptions
	uo.Flags(fs)
	models := modelFlags{indexing: true}
	models.register(fs, false)
	models.registerModelsDir(fs) // --update without --model finds the index's model as search does
	var heap memlimit.Options
	heap.Flags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs = append(inputs, pos...)
	if len(inputs) == 0 || loc.IsZero() {
		return usageErr(fs, "need --input and --index")
	}
	if err := in.check(fs); err != nil {
		return err
	}
	if err := heap.Validate(); err != nil {
		return usageErr(fs, "--heap-headroom must not be negative")
	}
	if *update && *resume {
		return usageErr(fs, "--update and --resume exclude each other")
	}
	if uo.DeleteMissing && !*update {
		return usageErr(fs, "--delete-missing needs --update")
	}
	log, err := lf.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer ix.Close()
	if !*update && !*resume && !*force {
		if err := refuseExisting(ctx, ix); err != nil {
			return err
		}
	}
	opts := uo.Options
	opts.Logger = log
	for _, path := range inputs {
		opts.Inputs = append(opts.Inputs, indexer.InputSpec{Path: path, Options: in.options(*format, *source)})
	}
	if !*quiet {
		opts.Progress = stdio.Stderr
	}
	var found indexModel
	if *update {
		var notes io.Writer
		if !*quiet {
			notes = stdio.Stderr
		}
		found = prepareUpdate(ctx, loc, &models, inputs, *source, notes)
	}
	if models.model != "" {
		enc, err := openEncoder(ctx, &models, log)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		defer enc.Close()
		opts.Encoder = enc
		if !*quiet {
			fmt.Fprintf(stdio.Stderr, "embedding with %s (%s backend%s, dim %d)\n", enc.Identity().Name, enc.enc.Info().Backend, models.onDevice(), enc.Identity().Dim)
		}
	}
	started := time.Now()
	stopHeap := keepHeap(ctx, heap, log)
	defer stopHeap()
	var sum *indexer.Summary
	switch {
	case *update:
		uo.Options = opts
		sum, err = ix.Update(ctx, uo)
	case *resume:
		sum, err = ix.Resume(ctx, opts)
	default:
		sum, err = ix.Build(ctx, opts)
	}
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted: what was kept and how to go on is the message, not the
			// "context canceled" it ends with.
			var notice strings.Builder
			stopped(&notice, loc, args, streamInput(inputs), *update, started, nil)
			return interrupted(strings.TrimPrefix(strings.TrimSpace(notice.String()), "kairos: "), err)
		}
		stopped(stdio.Stderr, loc, args, streamInput(inputs), *update, started, err)
		return fmt.Errorf("index: %w%s%s", err, skipBadHint(err, uo.SkipBad), needsModel(err, found))
	}
	if *quiet {
		printWarnings(stdio.Stderr, sum)
		return nil
	}
	printSummary(stdio, sum)
	return nil
}

// skipBadHint names --skip-bad after a malformed record that stopped a command run without it.
func skipBadHint(err error, skipBad bool) string {
	if skipBad || !document.IsRecordError(err) {
		return ""
	}
	return " (--skip-bad skips malformed records, counting and listing them)"
}

// printWarnings is what --quiet keeps of the summary: what the person must know although
// the command succeeded (malformed records skipped, a compaction that failed), on stderr.
func printWarnings(w io.Writer, s *indexer.Summary) {
	if n := s.Counts.Bad; n > 0 {
		fmt.Fprintf(w, "kairos: warning: skipped %s (--skip-bad):\n", plural(n, "malformed record"))
		for _, b := range s.BadRecords {
			fmt.Fprintf(w, "  %s\n", b)
		}
		if n > len(s.BadRecords) {
			fmt.Fprintf(w, "  ... and %d more\n", n-len(s.BadRecords))
		}
	}
	if s.CompactionError != "" {
		fmt.Fprintf(w, "kairos: warning: generation %d is committed, but %s; run `kairos compact --index %s` to retry\n", s.Generation, s.CompactionError, s.Dir)
	}
}

// stopped tells the person whose build ended early what was kept and how to go on: the live
// index, untouched; the checkpoint, if the build got to one, and the command that resumes it
// (the same arguments with --resume). cause is nil for an interrupted build (Ctrl-C,
// SIGTERM). After an error, it says so only of what this run kept (a checkpoint or a BM25
// half written since started: not one an earlier build left, and nothing when the build
// failed before writing any, its options, lock or checkpoint refused), and not when the error
// is a malformed record (a resume needs the very inputs the checkpoint recorded): after a
// disk filled up 44 minutes into a 10M-passage build, the error alone did not say that 8.46M
// vectors were kept. It asks the index's store, a directory or a cluster alike, with its own
// deadline: the build's context may be over, and a cluster may be what failed. stream names
// the build's first input that is a stream ("" if none): its checkpoint cannot be resumed, so
// the message says how to make a build that can be, instead of the command.
func stopped(w io.Writer, loc indexer.Location, args []string, stream string, update bool, started time.Time, cause error) {
	how, goOn := "interrupted", "Continue with"
	if cause != nil {
		if update || document.IsRecordError(cause) {
			return
		}
		how, goOn = "stopped by the error below", "Once it is dealt with (the inputs and options must stay the same), continue with"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ix, err := indexer.Open(ctx, loc)
	if err != nil {
		return
	}
	defer ix.Close()
	m, merr := ix.Manifest(ctx)
	live := "there is no index at " + loc.String() + " yet"
	switch {
	case merr == nil:
		live = "the live index (" + indexer.GenerationName(m.Generation) + ") is unchanged and searchable"
	case !errors.Is(merr, indexer.ErrNoIndex):
		live = "the live index could not be read (" + merr.Error() + ")"
	}
	if update {
		fmt.Fprintf(w, "kairos: interrupted: the update was not committed; %s. Run the same command again to update.\n", live)
		return
	}
	if merr == nil && m.Dense == nil && !m.Created.Before(started) {
		// A --bm25-first build stopped while embedding: its BM25 half is live.
		kept := ""
		if cp, err := ix.Checkpoint(ctx); err == nil && cp != nil && cp.Vectors > 0 {
			kept = fmt.Sprintf(" (checkpoint generation %d holds %d of them)", cp.Generation, cp.Vectors)
		}
		next := fmt.Sprintf("  %s: %s\n", goOn, resumeCommand(args))
		if stream != "" {
			next = streamNote(stream)
		}
		fmt.Fprintf(w, "kairos: %s while embedding: kept the BM25 index (generation %d, %d passages), live and searchable; the vectors were not finished%s.\n%s",
			how, m.Generation, m.Counts.Passages, kept, next)
		return
	}
	cp, err := ix.Checkpoint(ctx)
	if err != nil || cp == nil {
		if cause == nil {
			fmt.Fprintf(w, "kairos: interrupted before the first checkpoint: nothing of this build was kept; %s.\n"+
				"  A build checkpoints every --checkpoint-after (with --model), else every --checkpoint-every passages once that time has passed.\n", live)
		}
		return
	}
	if cause != nil && cp.Created.Before(started) {
		return
	}
	read := "every input read"
	if cp.Input != "" {
		read = fmt.Sprintf("%s read up to document %d", cp.Input, cp.Docs)
	}
	vecs := ""
	if cp.Vectors > 0 {
		vecs = fmt.Sprintf(", %d embedded", cp.Vectors)
	}
	next := fmt.Sprintf("  %s: %s\n", goOn, resumeCommand(args))
	if stream != "" {
		next = streamNote(stream)
	}
	fmt.Fprintf(w, "kairos: %s: kept checkpoint generation %d (%d passages%s; %s); %s.\n%s",
		how, cp.Generation, cp.Passages, vecs, read, live, next)
}

// streamNote replaces the resume command when the build read a stream: a resume reads its
// inputs again and checks them against the sums the build recorded, which a stream cannot give.
func streamNote(stream string) string {
	return "  " + stream + " is a stream, read once, so a resumed build could not check it: write it to a file and index that to be able to resume.\n"
}

// streamInput is the first of paths that is a stream (indexer.IsStream), "" if none is.
func streamInput(paths []string) string {
	for _, p := range paths {
		if indexer.IsStream(p) {
			return p
		}
	}
	return ""
}

// resumeCommand is the command line that resumes the build args described.
func resumeCommand(args []string) string {
	resume := []string{"kairos", "index", "--resume"}
	for _, a := range args {
		if a != "--force" && a != "-force" && a != "--resume" && a != "-resume" {
			resume = append(resume, shellQuote(a))
		}
	}
	return strings.Join(resume, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func printSummary(stdio IO, s *indexer.Summary) {
	c := s.Counts
	w := stdio.Stdout
	fmt.Fprintf(w, "index       %s (generation %d)\n", s.Dir, s.Generation)
	fmt.Fprintf(w, "documents   %d\n", c.Documents)
	fmt.Fprintf(w, "passages    %d\n", c.Passages)
	if s.Language.Analyzer != "" {
		fmt.Fprintf(w, "language    %s\n", s.Language)
	}
	if u := s.Update; u != nil {
		fmt.Fprintf(w, "added       %s\nchanged     %s\nunchanged   %s\ndeleted     %s\n",
			plural(u.Added, "document"), plural(u.Changed, "document"), plural(u.Unchanged, "document"), plural(u.Deleted, "document"))
		fmt.Fprintf(w, "written     %d passages (%d embedded), %d passages tombstoned\n", u.PassagesAdded, u.Embedded, u.PassagesDeleted)
		if u.MissingKept > 0 {
			fmt.Fprintf(w, "kept        %s absent from the inputs, not deleted: malformed records were skipped, and one may be such a document's new copy (fix them, then --update --delete-missing again)\n", plural(u.MissingKept, "document"))
		}
	}
	if len(s.NotFound) > 0 {
		fmt.Fprintf(w, "not found   %s: %s\n", plural(len(s.NotFound), "document id"), strings.Join(s.NotFound, " "))
	}
	if s.Tombstones > 0 {
		fmt.Fprintf(w, "tombstones  %d\n", s.Tombstones)
	}
	if s.Compacted {
		fmt.Fprintf(w, "compacted   yes\n")
	}
	if s.Upgraded != "" {
		fmt.Fprintf(w, "upgraded    written again as this version writes it; it was %s\n", s.Upgraded)
	}
	if s.CompactionError != "" {
		// The update is live (exit status 0); only the optional compaction failed.
		fmt.Fprintf(w, "compacted   no: compaction failed, the update is committed and live\n")
		fmt.Fprintf(stdio.Stderr, "kairos: warning: generation %d is committed, but %s; run `kairos compact --index %s` to retry\n", s.Generation, s.CompactionError, s.Dir)
	}
	if s.NoCheckpoint {
		fmt.Fprintf(w, "resumed     no: %s had no checkpoint, so the whole input was indexed\n", s.Dir)
	}
	if s.Resumed > 0 {
		fmt.Fprintf(w, "resumed     after %d documents of the checkpointed input\n", s.Resumed)
	}
	if s.Checkpoints > 0 {
		fmt.Fprintf(w, "checkpoints %d\n", s.Checkpoints)
	}
	switch {
	case s.LexicalGeneration > 0 && s.LexicalElapsed == 0:
		// Its BM25 half went live in the run this one resumed (a resume that builds the BM25
		// half itself times it), whose time is not known here.
		fmt.Fprintf(w, "bm25 first  generation %d, live since the interrupted run\n", s.LexicalGeneration)
	case s.LexicalGeneration > 0:
		fmt.Fprintf(w, "bm25 first  generation %d, live after %.2f s while the vectors were embedded\n", s.LexicalGeneration, s.LexicalElapsed.Seconds())
	}
	switch {
	case s.Dense != nil && s.Dense.IVF != nil:
		fmt.Fprintf(w, "vectors     %d (%s, dim %d, IVF %d lists)\n", s.Dense.Vectors, s.Dense.Model.Name, s.Dense.Model.Dim, s.Dense.IVF.Lists)
	case s.Dense != nil:
		fmt.Fprintf(w, "vectors     %d (%s, dim %d, HNSW M %d efC %d)\n", s.Dense.Vectors, s.Dense.Model.Name, s.Dense.Model.Dim, s.Dense.HNSW.M, s.Dense.HNSW.EfConstruction)
	}
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
	if c.URLsRemoved > 0 {
		fmt.Fprintf(w, "urls        %d removed: not http(s) (javascript:, data:, relative, ...); their documents are kept without a link\n", c.URLsRemoved)
	}
	thisRun := ""
	if s.Resumed > 0 {
		// The passages are the whole build's, the seconds this run's: their ratio is no rate
		// (a 10M build resumed for its last 1.54M vectors and its repair pass read 3,614/s).
		thisRun = " (this run)"
	}
	fmt.Fprintf(w, "seconds     %.2f%s\n", s.Elapsed.Seconds(), thisRun)
	if u := s.Update; (u == nil || u.PassagesAdded > 0) && s.Resumed == 0 {
		// An update that wrote nothing has no rate to report: it only compared hashes.
		fmt.Fprintf(w, "passages/s  %.0f\n", s.PassagesPerSecond())
	}
	printStages(w, s.Stages, s.Elapsed)
}

// printStages reports each stage's busy time, summed over its goroutines, its rate per busy
// second and its busy time over the build's wall time: the cores it kept busy on average. The
// stage with the lowest rate, or whose cores come near those it may use, limits the build.
func printStages(w io.Writer, st *indexer.BuildStages, wall time.Duration) {
	if st == nil || wall <= 0 {
		return
	}
	fmt.Fprintf(w, "stages      busy seconds summed over goroutines, rate per busy second, busy/wall (cores)\n")
	row := func(name string, t indexer.StageTime, rate string) {
		if t.Busy > 0 {
			fmt.Fprintf(w, "  %-11s %9.2f s  %-26s %5.2f\n", name, t.Busy.Seconds(), rate, t.Busy.Seconds()/wall.Seconds())
		}
	}
	d := st.Decompress
	row("decompress", d, fmt.Sprintf("%.1f MB/s of text", d.BytesPerSecond()/1e6))
	row("parse+clean", st.Parse, fmt.Sprintf("%.0f pages/s", st.Parse.PerSecond()))
	row("split", st.Split, fmt.Sprintf("%.0f passages/s", st.Split.PerSecond()))
	row("batch", st.Batch, fmt.Sprintf("%.0f documents/s", st.Batch.PerSecond()))
	row("index", st.Index, fmt.Sprintf("%.0f passages/s", st.Index.PerSecond()))
	row("write", st.Write, fmt.Sprintf("%.0f passages/s", st.Write.PerSecond()))
}

// plural is "1 document", "2 documents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// refuseExisting stops a plain build from replacing an existing index without being asked: a
// user who meant --update would lose every document not in this run's inputs.
func refuseExisting(ctx context.Context, ix *indexer.Index) error {
	dir := ix.Location().String()
	m, err := ix.Manifest(ctx)
	if errors.Is(err, indexer.ErrNoIndex) {
		return nil
	}
	if err != nil && !errors.Is(err, indexer.ErrDamaged) {
		return fmt.Errorf("index: %w", err) // the store could not be asked (a cluster, a directory's CURRENT)
	}
	if err != nil {
		return fmt.Errorf("index: %s holds an index that cannot be read (%v): add --force to replace it", dir, err)
	}
	return fmt.Errorf("index: %s already holds an index (generation %d, %d passages): add --update to update it from these inputs, or --force to replace it",
		dir, m.Generation, m.Counts.Passages)
}

// keepHeap holds the heap of a build near its live size (memlimit) until the returned
// function is called: a build's tables grow with the collection, and Go's default lets the
// heap reach twice them.
func keepHeap(ctx context.Context, o memlimit.Options, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := memlimit.Keep(ctx, o); err != nil {
			log.Warn("heap limit not kept", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}

// keepBuildHeap is keepHeap at kairos index's defaults, warnings to w: the builds of the
// benches run under it, so that their peaks are the ones a user's build reaches rather than
// Go's default of twice the live heap.
func keepBuildHeap(ctx context.Context, w io.Writer) (stop func()) {
	return keepHeap(ctx, memlimit.Options{}, slog.New(slog.NewTextHandler(w, nil)))
}
