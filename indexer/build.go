package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/blevesearch/bleve/v2"
	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/search/hnsw"
)

// BuildOptions are the settings of a build that shape the index; they are recorded in the
// manifest.
type BuildOptions struct {
	// MaxWords is the passage size limit, title prefix included. Default 120.
	MaxWords int `json:"max_words"`
	// BatchSize is the number of passages per bleve batch. Default 5000: bleve analyses a
	// batch in parallel, and larger batches make fewer, larger segments.
	BatchSize int `json:"batch_size"`
	// Analyzer is recorded for readers; Kairos always uses English analysis.
	Analyzer string `json:"analyzer"`
}

func (o *BuildOptions) setDefaults() {
	if o.MaxWords == 0 {
		o.MaxWords = 120
	}
	if o.BatchSize == 0 {
		o.BatchSize = 5000
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
	// Progress receives a status line about once a second; nil for none.
	Progress io.Writer
	Logger   *slog.Logger // nil: silent
	Version  string       // of the program, recorded in the manifest
}

func (o *Options) validate() error {
	if o.Dir == "" {
		return errors.New("no index directory")
	}
	if len(o.Inputs) == 0 {
		return errors.New("no input")
	}
	if o.Build.MaxWords < 0 || o.Build.BatchSize < 0 {
		return errors.New("negative size in build options")
	}
	o.Build.setDefaults()
	if o.MaxBadListed == 0 {
		o.MaxBadListed = 100
	}
	if o.Encoder != nil {
		if o.HNSW.Seed == 0 {
			o.HNSW.Seed = 1
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
// removes.
func Build(ctx context.Context, opts Options) (sum *Summary, err error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("build options: %w", err)
	}
	start := time.Now()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	gen, err := nextGen(opts.Dir)
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(opts.Dir, genName(gen)+tmpSuffix)
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()

	b, err := newBuilder(tmp, &opts)
	if err != nil {
		return nil, err
	}
	man, err := b.run(ctx)
	if err != nil {
		return nil, err
	}
	man.Generation = gen
	man.Created = start.UTC()
	if err := syncTree(tmp); err != nil {
		return nil, fmt.Errorf("syncing new generation: %w", err)
	}
	if err := writeManifest(tmp, man); err != nil {
		return nil, fmt.Errorf("writing manifest: %w", err)
	}
	if err := commitGen(opts.Dir, tmp, gen); err != nil {
		return nil, fmt.Errorf("committing generation %d: %w", gen, err)
	}
	if err := cleanOld(opts.Dir, gen); err != nil {
		opts.Logger.Warn("removing old generations", "dir", opts.Dir, "err", err)
	}
	return &Summary{
		Dir: opts.Dir, Generation: gen, Counts: man.Counts,
		BadRecords: b.bad, Dense: man.Dense, Elapsed: time.Since(start),
	}, nil
}

// builder holds one build's state. run's pipeline: a reader goroutine reads and splits
// documents into batches; the writer appends them to the passage store and to bleve, whose
// Batch analyses the documents of a batch on all cores.
type builder struct {
	dir      string
	opts     *Options
	split    *corpus.Splitter
	bad      []string
	man      Manifest
	progress *progress
}

func newBuilder(dir string, opts *Options) (*builder, error) {
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
	return &builder{
		dir: dir, opts: opts, split: split,
		man: Manifest{
			FormatVersion: FormatVersion, Kairos: opts.Version, Options: opts.Build,
			Counts: Counts{Skipped: map[string]int{}}, Sources: map[string]int{},
			Files: map[string]FileSum{},
		},
		progress: newProgress(opts.Progress, total),
	}, nil
}

func (b *builder) run(ctx context.Context) (*Manifest, error) {
	g, ctx := errgroup.WithContext(ctx)
	batches := make(chan []corpus.Passage, 4)
	// Hashing and reading fill separate slices (merged after Wait): they run concurrently.
	inputs := make([]Input, len(b.opts.Inputs))
	sums := make([]FileSum, len(b.opts.Inputs))
	for i, in := range b.opts.Inputs {
		g.Go(func() (err error) { // hash inputs beside the build: a second read, mostly from page cache
			if sums[i], err = fileSHA256(in.Path); err != nil {
				return fmt.Errorf("hashing %s: %w", in.Path, err)
			}
			return nil
		})
	}
	g.Go(func() (err error) {
		defer close(batches)
		defer recoverTo(&err, "reading inputs")
		for i, in := range b.opts.Inputs {
			format, source, err := b.readInput(ctx, in, batches)
			if err != nil {
				return err
			}
			inputs[i] = Input{Path: in.Path, Format: format, Source: source}
		}
		return nil
	})
	g.Go(func() (err error) {
		defer recoverTo(&err, "indexing")
		return b.write(ctx, batches)
	})
	stop := b.progress.start()
	err := g.Wait()
	stop()
	if err != nil {
		return nil, err
	}
	for i := range inputs {
		inputs[i].Size, inputs[i].SHA256 = sums[i].Size, sums[i].SHA256
	}
	b.man.Inputs = inputs
	b.progress.finish(b.man.Counts.Passages)
	return &b.man, nil
}

// readInput streams one input into batches of passages.
func (b *builder) readInput(ctx context.Context, in InputSpec, out chan<- []corpus.Passage) (format, source string, err error) {
	r, err := corpus.Open(ctx, in.Path, in.Options)
	if err != nil {
		return "", "", fmt.Errorf("opening %s: %w", in.Path, err)
	}
	defer r.Close()
	batch := make([]corpus.Passage, 0, b.opts.Build.BatchSize)
	var readBefore int64
	for {
		doc, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !corpus.IsRecordError(err) || !b.opts.SkipBad {
				return "", "", err
			}
			if len(b.bad) < b.opts.MaxBadListed {
				b.bad = append(b.bad, err.Error())
			}
			continue
		}
		source = doc.Source
		passages := b.split.Split(doc)
		batch = append(batch, passages...)
		if st := r.Stats(); st.BytesRead != readBefore {
			b.progress.read(st.BytesRead - readBefore)
			readBefore = st.BytesRead
		}
		if len(batch) >= b.opts.Build.BatchSize {
			select {
			case out <- batch:
			case <-ctx.Done():
				return "", "", ctx.Err()
			}
			batch = make([]corpus.Passage, 0, b.opts.Build.BatchSize)
		}
	}
	if len(batch) > 0 {
		select {
		case out <- batch:
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
	st := r.Stats()
	b.man.Counts.Documents += st.Documents
	b.man.Counts.Bad += st.Bad
	b.man.Counts.Repaired += st.Repaired
	for reason, n := range st.Skipped {
		b.man.Counts.Skipped[reason] += n
	}
	if source == "" {
		source = in.Options.Source
	}
	return st.Format, source, nil
}

// write appends batches to the passage store and the bleve index.
func (b *builder) write(ctx context.Context, batches <-chan []corpus.Passage) error {
	store, err := createStore(filepath.Join(b.dir, storeName))
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			store.f.Close()
		}
	}()
	m := newMapping()
	idx, err := bleve.NewUsing(bm25Path(b.dir), m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore,
		nil)
	if err != nil {
		return fmt.Errorf("creating bleve index: %w", err)
	}
	idxOpen := true
	defer func() {
		if idxOpen {
			idx.Close()
		}
	}()
	docs, err := newDocBuilder(m)
	if err != nil {
		return err
	}
	// Up to batchesInFlight bleve batches run at once: a batch's segment is built on one
	// thread after its analysis, so a second batch keeps the other cores busy meanwhile.
	// Keys and the passage store are assigned in order here, so the index is deterministic.
	const batchesInFlight = 2
	sem := make(chan struct{}, batchesInFlight)
	g, gctx := errgroup.WithContext(ctx)
	var graph *hnsw.Graph
	var jobs chan embedJob
	if b.opts.Encoder != nil {
		id := b.opts.Encoder.Identity()
		if graph, err = hnsw.New(id.Dim, b.opts.HNSW); err != nil {
			return err
		}
		jobs = make(chan embedJob, 2)
		g.Go(func() error { return b.embedder(gctx, jobs, graph) })
	}
	feed := func() error {
		for passages := range batches {
			if err := gctx.Err(); err != nil {
				return err
			}
			bb := idx.NewBatch()
			var job embedJob
			for i := range passages {
				p := &passages[i]
				key, err := store.Add(p)
				if err != nil {
					return fmt.Errorf("passage store: %w", err)
				}
				if jobs != nil {
					job.keys = append(job.keys, uint64(key))
					job.texts = append(job.texts, p.Text)
				}
				d, err := docs.build(key, p)
				if err != nil {
					return err
				}
				if err := bb.IndexAdvanced(d); err != nil {
					return fmt.Errorf("passage %s: %w", p.ID, err)
				}
				b.note(p)
			}
			if jobs != nil {
				select {
				case jobs <- job:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			n := len(passages)
			g.Go(func() (err error) {
				defer func() { <-sem }()
				defer recoverTo(&err, "indexing batch")
				if err := idx.Batch(bb); err != nil {
					return fmt.Errorf("indexing batch: %w", err)
				}
				b.progress.indexed(n)
				return nil
			})
		}
		return nil
	}
	ferr := feed()
	if jobs != nil {
		close(jobs)
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	closed = true
	if err := store.Close(); err != nil {
		return fmt.Errorf("closing passage store: %w", err)
	}
	idxOpen = false
	if err := idx.Close(); err != nil {
		return fmt.Errorf("closing bleve index: %w", err)
	}
	names := []string{storeName, bm25Name}
	if graph != nil {
		if err := graph.Save(hnswPath(b.dir)); err != nil {
			return fmt.Errorf("saving HNSW graph: %w", err)
		}
		o := graph.Options()
		b.man.Dense = &DenseInfo{
			Model: b.opts.Encoder.Identity(), Vectors: graph.Len(),
			HNSW: HNSWParams{M: o.M, EfConstruction: o.EfConstruction, EfSearch: o.EfSearch, Seed: o.Seed},
		}
		names = append(names, hnswName)
	}
	for _, name := range names {
		if err := sumTree(b.dir, filepath.Join(b.dir, name), b.man.Files); err != nil {
			return fmt.Errorf("checksumming %s: %w", name, err)
		}
	}
	return nil
}

// note records a written passage in the manifest's counts.
func (b *builder) note(p *Passage) {
	b.man.Counts.Passages++
	b.man.Sources[p.Source]++
	if d := p.Date; !d.IsZero() {
		if b.man.DateFrom.IsZero() || d.Before(b.man.DateFrom) {
			b.man.DateFrom = d
		}
		if d.After(b.man.DateTo) {
			b.man.DateTo = d
		}
	}
}

// Passage is corpus.Passage, named here for brevity.
type Passage = corpus.Passage

// recoverTo turns a panic in a pipeline goroutine into an error carrying the stack.
func recoverTo(err *error, stage string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: panic: %v\n%s", stage, r, debug.Stack())
	}
}
