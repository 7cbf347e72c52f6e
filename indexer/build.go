package indexer

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
)

// build builds from scratch; the caller holds the writer lock.
func (ix *Index) build(ctx context.Context, opts *Options) (*Summary, error) {
	// The engines of the first generation first (without the encoder when the build is
	// lexical first): the store refuses what it cannot do before it is asked anything.
	first := *opts
	if opts.lexicalFirst() {
		first.Encoder = nil
	}
	eng, err := ix.engines(ctx, &first, nil)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	// A new build abandons any checkpoint of an earlier one.
	if err := ix.st.DropCheckpoint(ctx); err != nil {
		return nil, err
	}
	if opts.lexicalFirst() {
		return ix.buildLexicalFirst(ctx, opts, &first, eng, runSpec{mode: modeAppend})
	}
	return ix.drive(ctx, &first, eng, runSpec{mode: modeAppend})
}

// lexicalFirst reports whether a build commits its BM25 index before its vectors (with an
// encoder, unless Options.EmbedInline).
func (o *Options) lexicalFirst() bool {
	return !o.EmbedInline && o.Encoder != nil
}

// position is how far a build has read: documents consumed from input Input.
type position = manifest.Position

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

// drive runs readers into a chain of genWriters, writing through the engines eng: one per
// checkpoint, the last one committed as the live generation.
func (ix *Index) drive(ctx context.Context, opts *Options, eng *store.Connected, spec runSpec) (sum *Summary, err error) {
	start := time.Now()
	prev, err := ix.st.Live(ctx)
	if err != nil {
		return nil, err
	}
	split, err := corpus.NewSplitter(corpus.SplitOptions{MaxWords: opts.Build.MaxWords})
	if err != nil {
		return nil, err
	}
	var total int64
	stream := make([]bool, len(opts.Inputs))
	anyStream := false
	for i, in := range opts.Inputs {
		if stream[i] = IsStream(in.Path); stream[i] {
			anyStream = true
			continue
		}
		if st, err := os.Stat(in.Path); err == nil {
			total += st.Size()
		}
	}
	if anyStream {
		// A stream's size is unknown: its bytes counted against the files' total showed 100%
		// and an ETA of 0 s while it was still being read. No share and no ETA, then.
		total = 0
	}
	pw := opts.Progress
	if len(opts.Inputs) == 0 {
		pw = nil // a deletion reads nothing: the line would count zeros (its compaction reports)
	}
	prog := newProgress(pw, total, opts.Encoder != nil)
	r := &reader{opts: opts, split: split, prog: prog, stream: stream}
	if spec.mode == modeUpdate && spec.base != nil {
		// The reader skips splitting documents whose hash the live generation already has.
		docs, err := spec.base.docTable(ctx)
		if err != nil {
			return nil, err
		}
		r.known = make(map[string]doctable.Hash, len(docs))
		for id, e := range docs {
			r.known[id] = e.Hash
		}
	}

	g, gctx := errgroup.WithContext(ctx)
	// Inputs are hashed beside the build (a second read, mostly from page cache); checkpoints
	// and the final commit wait for the sums. Streams are hashed by the reader instead.
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
			if stream[i] {
				continue
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
			s := sums[i]
			if stream[i] {
				s = r.streams.get(i) // none before the stream's end
			}
			out[i] = Input{Path: in.Path, Size: s.Size, SHA256: s.SHA256}
		}
		return out, nil
	}

	// The reader's outcome is recorded before batches is closed, so the writer, seeing the
	// channel end, can tell a failed read from the end of the input: errgroup cancels gctx only
	// after the reader has returned, which the writer may not yet see, and a writer that took
	// a failed read for a clean end reported "empty input" instead of the read's error.
	batches := make(chan docBatch, 4)
	var readErr error
	g.Go(func() (err error) {
		defer func() { readErr = err; close(batches) }()
		defer recoverTo(&err, "reading inputs")
		if err := r.readAll(gctx, spec.from, batches); err != nil {
			return err
		}
		prog.inputsRead()
		return nil
	})
	d := &driver{ix: ix, opts: opts, copies: eng.CheckpointCopies, spec: spec, prog: prog, prev: prev, inputs: inputs,
		readErr: func() error { return readErr }}
	var man *Manifest
	g.Go(func() (err error) {
		defer recoverTo(&err, "indexing")
		start := time.Now()
		man, err = d.write(gctx, batches)
		if err == nil {
			prog.stages.write.Add(time.Since(start)-prog.stages.writerWait, int64(man.Counts.Passages), 0)
		}
		return err
	})
	stop := prog.start()
	err = g.Wait()
	stop()
	if d.tmp != "" && err != nil {
		ix.discard(ctx, d.writing(), opts.Logger)
	}
	if err != nil {
		return nil, err
	}
	prog.finish()
	return &Summary{
		Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, BadRecords: r.bad,
		Dense: man.Dense, Elapsed: time.Since(start), Update: d.update(), NotFound: d.notFound,
		Tombstones: man.Tombstones, Compacted: d.compacted, CompactionError: d.compactErr, Checkpoints: d.checkpoints,
		Resumed: spec.from.Docs, Language: opts.lang, Stages: prog.stages.result(),
	}, nil
}
