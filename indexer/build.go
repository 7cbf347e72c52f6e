package indexer

import (
	"context"
	"errors"
	"fmt"
	"github.com/kairos-rag/kairos/internal/atomicfile"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// BuildOptions are the settings of a build that shape the index; they are recorded in the
// manifest.
type BuildOptions struct {
	// MaxWords is the passage size limit, title prefix included. Default 120.
	MaxWords int `json:"max_words"`
	// BatchSize is the number of passages per bleve batch. Default 5000: bleve analyses a
	// batch in parallel, and larger batches make fewer, larger segments.
	BatchSize int `json:"batch_size"`
	// Language is the language the passages are analysed as (language.go): set, it is
	// forced; empty, the build detects it from its inputs.
	Language string `json:"language,omitempty"`
	// Analyzer is the text analyzer of Language, set by the build (internal/langanalysis).
	Analyzer string `json:"analyzer"`
}

func (o *BuildOptions) setDefaults() {
	if o.MaxWords == 0 {
		o.MaxWords = DefaultMaxWords
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	o.Analyzer = Analyzer
}

// InputSpec is one corpus input of a build.
type InputSpec struct {
	Path    string
	Options corpus.Options // format, source, FAQ columns
}

// Options configure Build.
type Options struct {
	Dir    string      // index directory; created when missing
	Inputs []InputSpec // read in order
	Build  BuildOptions
	// Encoder, when set, embeds every passage; the vectors go into an HNSW graph beside the
	// BM25 index, and the model's identity into the manifest.
	Encoder PassageEncoder
	// HNSW configures the graph (zero: hnsw defaults, seed 1).
	HNSW hnsw.Options
	// SkipBad skips malformed records (counted and listed in the Summary) instead of failing.
	SkipBad bool
	// MaxBadListed bounds Summary.BadRecords. Default 100.
	MaxBadListed int
	// CheckpointEvery, when positive, commits a checkpoint generation (named by DIR/CHECKPOINT,
	// not live) after about this many passages, so that Resume can continue a build that
	// died. With an encoder the interval grows to a tenth of the passages written, since each
	// checkpoint rewrites the HNSW graph file.
	CheckpointEvery int
	// Progress receives a status line about once a second; nil for none.
	Progress io.Writer
	Logger   *slog.Logger // nil: silent
	Version  string       // of the program, recorded in the manifest
	// AllowEmpty lets a build commit an index without passages, or an update whose inputs
	// yielded no document delete every document (DeleteMissing). Without it an empty or
	// all-bad input is refused and the live generation stays.
	AllowEmpty bool

	lang LanguageChoice // settled before writing (language.go)

	// faultAt, set only by the fault-injection tests of this package, is called at each named
	// commit point of a writer; an error it returns is handled as an I/O error at that point.
	faultAt func(point string) error
}

// at marks the commit point named point (see faultAt).
func (o *Options) at(point string) error {
	if o.faultAt == nil {
		return nil
	}
	return o.faultAt(point)
}

func (o *Options) validate() error {
	if o.Dir == "" {
		return errors.New("no index directory")
	}
	if o.Build.MaxWords < 0 || o.Build.BatchSize < 0 || o.CheckpointEvery < 0 {
		return errors.New("negative size in build options")
	}
	o.Build.setDefaults()
	if o.MaxBadListed == 0 {
		o.MaxBadListed = 100
	}
	if o.Encoder != nil {
		if o.HNSW.Seed == 0 {
			o.HNSW.Seed = DefaultHNSWSeed
		}
		if err := o.HNSW.Validate(); err != nil {
			return fmt.Errorf("hnsw: %w", err)
		}
		if o.Encoder.Identity().Dim <= 0 {
			return errors.New("encoder reports no dimension")
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Summary reports what a build did. Counts add up: Documents + skipped + Bad = records read.
type Summary struct {
	Dir        string
	Generation int
	Counts     Counts
	BadRecords []string   // first MaxBadListed malformed records, with file and position
	Dense      *DenseInfo // nil without an encoder
	Elapsed    time.Duration
	// Update says what was added, replaced, kept and deleted (updates and deletes only).
	Update *UpdateCounts
	// NotFound lists document ids Delete was asked for that the index does not hold.
	NotFound []string
	// Tombstones is the number of dead keys in the new generation; Compacted says whether
	// it was compacted (written without them).
	Tombstones int
	Compacted  bool
	// CompactionError is set when the update or delete committed (Generation is live) but
	// the compaction that should have followed failed; the index is usable, with its
	// tombstones, and `kairos compact` can be run again.
	CompactionError string
	// Checkpoints counts checkpoint generations committed; Resumed says where a resumed
	// build started (documents skipped).
	Checkpoints int
	Resumed     int
	// Language is the language the passages were analysed as, and why.
	Language LanguageChoice
}

// ErrEmptyInput is returned when the inputs yield nothing and committing would replace an
// index by an empty one (Options.AllowEmpty allows it).
var ErrEmptyInput = errors.New("empty input")

// countsText describes what a reader found, for errors about empty inputs.
func countsText(c Counts) string {
	skipped := 0
	for _, n := range c.Skipped {
		skipped += n
	}
	return fmt.Sprintf("%d documents read, %d bad, %d skipped", c.Documents, c.Bad, skipped)
}

// PassagesPerSecond is the build's overall rate.
func (s *Summary) PassagesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Counts.Passages) / s.Elapsed.Seconds()
}

// Build reads the inputs, splits them into passages and writes a new generation of the index
// at opts.Dir, then makes it live. An existing index stays live and intact until the new one
// is complete; a failed or cancelled build leaves only a *.tmp directory that the next build
// removes, plus, with CheckpointEvery, a checkpoint Resume continues from.
func Build(ctx context.Context, opts Options) (*Summary, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("build options: %w", err)
	}
	if len(opts.Inputs) == 0 {
		return nil, errors.New("build options: no input")
	}
	if err := opts.resolveLanguage(ctx); err != nil {
		return nil, err
	}
	unlock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return buildLocked(ctx, &opts)
}

// buildLocked builds from scratch; the caller holds the writer lock.
func buildLocked(ctx context.Context, opts *Options) (*Summary, error) {
	// A new build abandons any checkpoint of an earlier one.
	if err := removeCheckpoint(opts.Dir); err != nil {
		return nil, err
	}
	return drive(ctx, opts, runSpec{mode: modeAppend})
}

// position is how far a build has read: documents consumed from input Input.
type position struct {
	Input int `json:"input"`
	Docs  int `json:"docs"`
}

// runSpec says what drive does.
type runSpec struct {
	mode          writeMode
	base          *Generation // generation to derive from; nil: from scratch
	from          position    // where reading starts (resumed builds)
	deleteMissing bool        // update: delete documents absent from the inputs
	deleteIDs     []string    // documents to delete (kairos delete)
	compact       bool        // write without tombstones when the update leaves too many
	compactRatio  float64
}

// drive runs readers into a chain of genWriters: one per checkpoint, the last one committed
// as the live generation.
func drive(ctx context.Context, opts *Options, spec runSpec) (sum *Summary, err error) {
	start := time.Now()
	prev := liveGen(opts.Dir)
	split, err := corpus.NewSplitter(corpus.SplitOptions{MaxWords: opts.Build.MaxWords})
	if err != nil {
		return nil, err
	}
	var total int64
	for _, in := range opts.Inputs {
		if st, err := os.Stat(in.Path); err == nil {
			total += st.Size()
		}
	}
	prog := newProgress(opts.Progress, total, opts.Encoder != nil)
	r := &reader{opts: opts, split: split, prog: prog}
	if spec.mode == modeUpdate && spec.base != nil {
		// The reader skips splitting documents whose hash the live generation already has.
		docs, err := readDocTable(filepath.Join(spec.base.Dir, docTableName))
		if err != nil {
			return nil, err
		}
		r.known = make(map[string]DocHash, len(docs))
		for id, e := range docs {
			r.known[id] = e.Hash
		}
	}

	g, gctx := errgroup.WithContext(ctx)
	// Inputs are hashed beside the build (a second read, mostly from page cache); checkpoints
	// and the final commit wait for the sums.
	sums := make([]FileSum, len(opts.Inputs))
	hashed := make(chan struct{})
	var hashErr error
	go func() {
		defer close(hashed)
		for i, in := range opts.Inputs {
			if gctx.Err() != nil {
				hashErr = gctx.Err()
				return
			}
			if sums[i], hashErr = fileSHA256(in.Path); hashErr != nil {
				hashErr = fmt.Errorf("hashing %s: %w", in.Path, hashErr)
				return
			}
		}
	}()
	defer func() { <-hashed }()
	inputs := func() ([]Input, error) {
		<-hashed
		if hashErr != nil {
			return nil, hashErr
		}
		out := make([]Input, len(opts.Inputs))
		for i, in := range opts.Inputs {
			out[i] = Input{Path: in.Path, Size: sums[i].Size, SHA256: sums[i].SHA256}
		}
		return out, nil
	}

	batches := make(chan docBatch, 4)
	g.Go(func() (err error) {
		defer close(batches)
		defer recoverTo(&err, "reading inputs")
		if err := r.readAll(gctx, spec.from, batches); err != nil {
			return err
		}
		prog.inputsRead()
		return nil
	})
	d := &driver{dir: opts.Dir, opts: opts, spec: spec, prog: prog, prev: prev, inputs: inputs}
	var man *Manifest
	g.Go(func() (err error) {
		defer recoverTo(&err, "indexing")
		man, err = d.write(gctx, batches)
		return err
	})
	stop := prog.start()
	err = g.Wait()
	stop()
	if d.tmp != "" && err != nil {
		os.RemoveAll(d.tmp)
	}
	if err != nil {
		return nil, err
	}
	prog.finish()
	return &Summary{
		Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, BadRecords: r.bad,
		Dense: man.Dense, Elapsed: time.Since(start), Update: d.update(), NotFound: d.notFound,
		Tombstones: man.Tombstones, Compacted: d.compacted, CompactionError: d.compactErr, Checkpoints: d.checkpoints,
		Resumed: spec.from.Docs, Language: opts.lang,
	}, nil
}

// driver owns the writer side of drive.
type driver struct {
	dir         string
	opts        *Options
	spec        runSpec
	prog        *progress
	prev        int
	inputs      func() ([]Input, error)
	tmp         string // directory being written
	w           *genWriter
	upd         UpdateCounts
	notFound    []string
	checkpoints int
	compacted   bool
	compactErr  string
}

func (d *driver) update() *UpdateCounts {
	if d.spec.mode != modeUpdate {
		return nil
	}
	return &d.upd
}

// open starts a new generation derived from base (nil: from scratch).
func (d *driver) open(ctx context.Context, base *Generation) error {
	gen, err := nextGen(d.dir)
	if err != nil {
		return err
	}
	d.tmp = filepath.Join(d.dir, genName(gen)+tmpSuffix)
	if err := os.RemoveAll(d.tmp); err != nil {
		return err
	}
	if err := os.Mkdir(d.tmp, 0o755); err != nil {
		return err
	}
	if d.w, err = newGenWriter(d.tmp, gen, d.opts, d.spec.mode, base, d.prog); err != nil {
		return err
	}
	if d.spec.mode == modeUpdate {
		// An update's manifest describes its own inputs and reader counts.
		d.w.man.Inputs = nil
		d.w.man.Counts.Skipped, d.w.man.Counts.Bad, d.w.man.Counts.Repaired = map[string]int{}, 0, 0
	}
	d.w.start(ctx)
	return nil
}

func (d *driver) write(ctx context.Context, batches <-chan docBatch) (*Manifest, error) {
	if err := d.open(ctx, d.spec.base); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			d.w.abort()
		}
	}()
	sinceCheckpoint := 0
	for b := range batches {
		if err := d.w.apply(b); err != nil {
			return nil, err
		}
		if err := d.opts.at("batch-applied"); err != nil {
			return nil, err
		}
		pos := position{Input: b.input, Docs: b.docsIn}
		if b.done != nil {
			pos = position{Input: b.input + 1}
		}
		for _, dp := range b.docs {
			sinceCheckpoint += len(dp.passages)
		}
		if n := d.checkpointInterval(); n > 0 && sinceCheckpoint >= n {
			if err := d.checkpoint(ctx, pos); err != nil {
				return nil, err
			}
			sinceCheckpoint = 0
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.spec.mode == modeUpdate && d.spec.deleteMissing && len(d.w.seen) == 0 && !d.opts.AllowEmpty {
		return nil, fmt.Errorf("%w: the inputs yielded no document (%s), so --delete-missing would delete all %d documents of the index; nothing was changed (AllowEmpty/--allow-empty does it)",
			ErrEmptyInput, countsText(d.w.man.Counts), len(d.w.docs))
	}
	if d.spec.mode == modeUpdate && d.spec.deleteMissing {
		var missing []string
		for id := range d.w.docs {
			if !d.w.seen[id] {
				missing = append(missing, id)
			}
		}
		sort.Strings(missing)
		if _, err := d.w.deleteDocs(missing); err != nil {
			return nil, err
		}
	}
	if len(d.spec.deleteIDs) > 0 {
		nf, err := d.w.deleteDocs(d.spec.deleteIDs)
		if err != nil {
			return nil, err
		}
		d.notFound = nf
	}
	if err := d.w.wait(); err != nil {
		return nil, err
	}
	d.upd = d.w.upd
	if d.spec.mode == modeUpdate && d.upd.PassagesAdded == 0 && d.upd.PassagesDeleted == 0 {
		// Nothing changed: the live generation stays, and no graph or bleve files are rewritten.
		d.w.abort()
		ok = true
		os.RemoveAll(d.tmp)
		d.tmp = ""
		return d.spec.base.Manifest, nil
	}
	if d.spec.mode == modeAppend && d.w.man.Counts.Passages == 0 && !d.opts.AllowEmpty {
		what := "to commit an empty index"
		if d.prev > 0 {
			what = fmt.Sprintf("to replace the live generation %d with an empty one; it stays live", d.prev)
		}
		return nil, fmt.Errorf("%w: no passages from the inputs (%s): refusing %s (AllowEmpty/--allow-empty commits it)",
			ErrEmptyInput, countsText(d.w.man.Counts), what)
	}
	man, err := d.w.finish()
	ok = true
	if err != nil {
		return nil, err
	}
	if err := d.opts.at("finished"); err != nil {
		return nil, err
	}
	gen := d.w.gen
	if err := d.seal(man, gen); err != nil {
		return nil, err
	}
	if err := commitGen(d.dir, d.tmp, gen, d.opts.at); err != nil {
		return nil, fmt.Errorf("committing generation %d: %w", gen, err)
	}
	d.tmp = ""
	if d.spec.mode == modeAppend { // a build's own checkpoint; an update leaves a pending build's alone
		if err := removeCheckpoint(d.dir); err != nil {
			d.opts.Logger.Warn("removing checkpoint", "dir", d.dir, "err", err)
		}
		if err := d.opts.at("checkpoint-removed"); err != nil {
			return nil, err
		}
	}
	if err := cleanOld(d.dir, gen, d.prev); err != nil {
		d.opts.Logger.Warn("removing old generations", "dir", d.dir, "err", err)
	}
	if err := d.opts.at("old-removed"); err != nil {
		return nil, err
	}
	if d.spec.compact && d.spec.compactRatio > 0 && man.Tombstones > 0 &&
		float64(man.Tombstones) > d.spec.compactRatio*float64(man.Tombstones+man.Counts.Passages) {
		cman, err := compactGen(ctx, d.opts, filepath.Join(d.dir, genName(gen)), d.prev)
		if err != nil {
			// The update is committed and live: report that, and the compaction's failure
			// beside it, rather than an error that reads as if nothing had happened.
			d.compactErr = fmt.Sprintf("compacting generation %d: %v", gen, err)
			d.opts.Logger.Warn("update committed, compaction failed", "generation", gen, "err", err)
			return man, nil
		}
		d.compacted = true
		return cman, nil
	}
	return man, nil
}

// checkpointInterval is CheckpointEvery, raised to a tenth of the passages written so far when
// the index has a graph: each checkpoint rewrites the whole graph file, and growing intervals
// bound the total written to about ten graphs' worth instead of growing with the square of
// the corpus. Store segments and bleve files are shared by link and cost nothing to carry.
func (d *driver) checkpointInterval() int {
	n := d.opts.CheckpointEvery
	if n > 0 && d.w.graph != nil {
		n = max(n, d.w.man.Counts.Passages/10)
	}
	return n
}

// seal completes a written generation: inputs with their sums, generation number, time,
// fsync of every file, and the manifest written last.
func (d *driver) seal(man *Manifest, gen int) error {
	ins, err := d.inputs()
	if err != nil {
		return err
	}
	for i := range ins {
		if i < len(man.Inputs) {
			ins[i].Format, ins[i].Source = man.Inputs[i].Format, man.Inputs[i].Source
		}
	}
	man.Inputs = ins
	man.Generation = gen
	man.Created = time.Now().UTC()
	if err := syncTree(d.tmp); err != nil {
		return fmt.Errorf("syncing new generation: %w", err)
	}
	if err := d.opts.at("synced"); err != nil {
		return err
	}
	if err := writeManifest(d.tmp, man); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	return d.opts.at("manifest-written")
}

// checkpoint commits what is written so far as a checkpoint generation and continues in a new
// generation derived from it. The graph stays in memory; everything else is reopened.
func (d *driver) checkpoint(ctx context.Context, pos position) error {
	if err := d.w.wait(); err != nil {
		return err
	}
	graph := d.w.graph
	man, err := d.w.finish()
	if err != nil {
		return err
	}
	if err := d.opts.at("checkpoint-finished"); err != nil {
		return err
	}
	gen := d.w.gen
	if err := d.seal(man, gen); err != nil {
		return err
	}
	final := filepath.Join(d.dir, genName(gen))
	if err := os.Rename(d.tmp, final); err != nil {
		return err
	}
	d.tmp = ""
	if err := atomicfile.SyncDir(d.dir); err != nil {
		return err
	}
	if err := d.opts.at("checkpoint-renamed"); err != nil {
		return err
	}
	cp := checkpoint{Generation: genName(gen), Position: pos, Inputs: man.Inputs, Options: d.opts.Build, SkipBad: d.opts.SkipBad}
	if d.opts.Encoder != nil {
		id := d.opts.Encoder.Identity()
		cp.Model = &id
		cp.HNSW = &man.Dense.HNSW
	}
	if err := writeCheckpoint(d.dir, &cp); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	d.checkpoints++
	if err := d.opts.at("checkpoint-recorded"); err != nil {
		return err
	}
	if err := cleanOld(d.dir, d.prev, d.prev); err != nil { // drops the previous checkpoint
		d.opts.Logger.Warn("removing old checkpoints", "dir", d.dir, "err", err)
	}
	if err := d.opts.at("checkpoint-cleaned"); err != nil {
		return err
	}
	base, err := openGen(ctx, final, CheckCheap, false)
	if err != nil {
		return fmt.Errorf("reopening checkpoint: %w", err)
	}
	base.BM25.Close() // the writer copies bleve's files; it never reads the base's index
	base.Dense = graph
	return d.open(ctx, base)
}

// reader streams documents of the inputs into batches.
type reader struct {
	opts  *Options
	split *corpus.Splitter
	prog  *progress
	bad   []string
	known map[string]DocHash // update: content hashes of the base generation (read only)
}

func (r *reader) readAll(ctx context.Context, from position, out chan<- docBatch) error {
	for i, in := range r.opts.Inputs {
		if i < from.Input {
			continue
		}
		skip := 0
		if i == from.Input {
			skip = from.Docs
		}
		if err := r.readInput(ctx, i, in, skip, out); err != nil {
			return err
		}
	}
	return nil
}

// readInput streams one input into batches of documents, skipping its first skip documents
// (consumed before a checkpoint).
func (r *reader) readInput(ctx context.Context, i int, in InputSpec, skip int, out chan<- docBatch) error {
	cr, err := corpus.Open(ctx, in.Path, in.Options)
	if err != nil {
		return fmt.Errorf("opening %s: %w", in.Path, err)
	}
	defer cr.Close()
	// Documents are split on workers, in input order; the ones a checkpoint already holds and
	// (on update) the unchanged ones are not split: the writer skips them.
	pr := corpus.NewPassageReader(ctx, cr, r.split, corpus.PassageReaderOptions{
		Workers: in.Options.Workers,
		Want: func(n int, doc *corpus.Document) bool {
			if n <= skip {
				return false
			}
			known, ok := r.known[doc.ID]
			return !ok || known != contentHash(doc)
		},
	})
	defer pr.Close() // before cr.Close: it stops the goroutine that reads cr
	send := func(b docBatch) error {
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b := docBatch{input: i}
	passages, consumed := 0, 0
	var readBefore int64
	source := ""
	for {
		doc, split, err := pr.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !corpus.IsRecordError(err) || !r.opts.SkipBad {
				return err
			}
			if len(r.bad) < r.opts.MaxBadListed {
				r.bad = append(r.bad, err.Error())
			}
			continue
		}
		consumed++
		st := pr.Stats()
		if err := r.opts.checkLanguage(in.Path, st.Languages); err != nil {
			return err
		}
		r.prog.read(st.BytesRead-readBefore, 1)
		readBefore = st.BytesRead
		source = doc.Source
		if consumed <= skip {
			continue
		}
		h := contentHash(&doc)
		var ps []corpus.Passage
		if known, ok := r.known[doc.ID]; !ok || known != h {
			ps = split // unchanged documents are not split: the writer skips them
			r.prog.passagesSplit(len(ps))
		}
		b.docs = append(b.docs, docPassages{id: doc.ID, hash: h, passages: ps, idFromPosition: doc.IDFromPosition})
		passages += len(ps)
		if passages >= r.opts.Build.BatchSize || len(b.docs) >= 10*r.opts.Build.BatchSize {
			b.docsIn = consumed
			if err := send(b); err != nil {
				return err
			}
			b, passages = docBatch{input: i}, 0
		}
	}
	if source == "" {
		source = in.Options.Source
	}
	b.docsIn = consumed
	st := pr.Stats()
	format := st.Format // detected by the reader, or forced
	if format == "" {
		format = in.Options.Format
	}
	b.done = &inputDone{stats: st, format: format, source: source}
	return send(b)
}

// Passage is corpus.Passage, named here for brevity.
type Passage = corpus.Passage

// recoverTo turns a panic in a pipeline goroutine into an error carrying the stack.
func recoverTo(err *error, stage string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: panic: %v\n%s", stage, r, debug.Stack())
	}
}
