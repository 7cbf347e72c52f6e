package indexer

import (
	"context"
	"fmt"
	"time"

	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
)

// resumeAddVectors finishes a lexical-first build interrupted while embedding: the live
// generation holds the BM25 index of these inputs and options, without vectors. It returns
// nil when the live generation is not such a one (Resume then builds from scratch).
func (ix *Index) resumeAddVectors(ctx context.Context, opts *Options) (*Summary, error) {
	lexGen, err := ix.st.Live(ctx)
	if err != nil || lexGen == 0 {
		return nil, err
	}
	man, err := ix.st.Manifest(ctx, lexGen)
	if err != nil || man.Dense != nil {
		return nil, nil
	}
	cp := checkpoint{Inputs: man.Inputs, Options: man.Options}
	lex := *opts
	lex.Encoder = nil
	if lex.Build.Lexical == "" { // naming no engine continues in the generation's
		lex.Build.Lexical = man.Options.Lexical
	}
	eng, err := ix.engines(ctx, &lex, nil) // settles the collection settings to compare
	if err != nil {
		return nil, err
	}
	eng.Close()
	lex.Build.Lexical = man.Options.Lexical // "" stays the bleve of an older manifest
	if checkpointMatches(&cp, &lex) != nil {
		return nil, nil
	}
	opts.Build = lex.Build
	start := time.Now()
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "resuming: generation %d holds the BM25 index of these inputs; embedding its %d passages\n", lexGen, man.Counts.Passages)
	}
	dm, err := ix.addVectors(ctx, opts, lexGen, 0, nil)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: dm.Generation, Counts: dm.Counts, Dense: dm.Dense,
		Elapsed: time.Since(start), LexicalGeneration: lexGen, Resumed: man.Counts.Documents, Language: opts.lang}, nil
}

// buildLexicalFirst is a lexical-first build (Options.EmbedInline false): the inputs are
// indexed without the encoder (lex: opts without it, its engines eng connected) and
// committed, so BM25 answers while the vectors are embedded; then addVectors writes the next
// generation with them. spec says where reading starts (a resumed build) and the checkpoint
// it continues (nil: from scratch). The caller holds the writer lock.
func (ix *Index) buildLexicalFirst(ctx context.Context, opts, lex *Options, eng *store.Connected, spec runSpec) (*Summary, error) {
	start := time.Now()
	prev, err := ix.st.Live(ctx) // the index this build replaces, kept one round as builds keep it
	if err != nil {
		return nil, err
	}
	opts.Build = lex.Build // the embedding half records the same options
	sum, err := ix.drive(ctx, lex, eng, spec)
	eng.Close()
	if err != nil {
		return nil, err
	}
	sum.LexicalGeneration, sum.LexicalElapsed = sum.Generation, time.Since(start)
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "BM25 index committed as generation %d and searchable; embedding its %d passages into the next generation\n",
			sum.Generation, sum.Counts.Passages)
	}
	man, err := ix.addVectors(ctx, opts, sum.Generation, prev, nil)
	if err != nil {
		return nil, err
	}
	sum.Generation, sum.Dense, sum.Elapsed = man.Generation, man.Dense, time.Since(start)
	return sum, nil
}

// addVectors writes the generation after lexGen (a BM25-only generation): the same
// passages, lexical index, store and documents (shared by hard link where the engines allow,
// copied where they keep points), plus the vectors of every live passage, embedded in key
// order; then makes it live and drops the generations other than it and prev. With
// checkpoints on (CheckpointEvery), it commits a checkpoint generation every CheckpointAfter
// (the vectors so far; the checkpoint record says up to which key) that Resume continues
// from; lexGen stays live meanwhile. from, when not nil, is such a checkpoint to continue.
func (ix *Index) addVectors(ctx context.Context, opts *Options, lexGen, prev int, from *checkpoint) (*Manifest, error) {
	src, err := ix.open(ctx, lexGen, ReadOptions{SkipVectors: true, Trusted: true})
	if err != nil {
		return nil, fmt.Errorf("opening generation %d to embed its passages: %w", lexGen, err)
	}
	r := &embedRun{ix: ix, opts: opts, lexGen: lexGen, prev: prev, src: src, last: time.Now()}
	defer r.close(ctx)
	if r.eng, err = ix.engines(ctx, opts, src.Manifest); err != nil {
		return nil, err
	}
	n := src.Manifest.Counts.Passages
	r.prog = newProgress(opts.Progress, 1, true)
	r.prog.read(1, src.Manifest.Counts.Documents) // the input is read: the line shows the embedding
	r.prog.passagesSplit(n)
	r.prog.passagesIndexed(n)
	r.prog.inputsRead()
	base := src
	if from != nil {
		cpGen, _ := manifest.ParseGeneration(from.Generation)
		if base, err = ix.open(ctx, cpGen, ReadOptions{}); err != nil {
			return nil, fmt.Errorf("opening checkpoint %s: %w", from.Generation, err)
		}
		base.Lexical.Close() // the writer copies the engine's parts; it never reads the base's index
		base.Lexical = nil
		r.cpBase, r.next = base, from.Embedding.NextKey
		r.prog.passagesEmbedded(base.Vectors.Live())
	}
	// How many vectors are coming is known: the first writer's graph is allocated once, at
	// its final size (it stays in memory across checkpoints, VectorCommit.Reopen).
	r.expect = n
	if err := r.open(ctx, base, handover{}); err != nil {
		return nil, err
	}
	stop := r.prog.start()
	man, err := r.embedAll(ctx)
	stop()
	if err != nil {
		return nil, err
	}
	man.Generation, man.Created = r.gen, time.Now().UTC()
	if err := syncTree(r.tmp); err != nil {
		return nil, fmt.Errorf("syncing new generation: %w", err)
	}
	if err := manifest.Write(r.tmp, man); err != nil {
		return nil, fmt.Errorf("writing manifest: %w", err)
	}
	if err := ix.st.Commit(ctx, r.writing(), man, store.CommitOptions{At: opts.at}); err != nil {
		return nil, fmt.Errorf("committing generation %d: %w", r.gen, err)
	}
	r.tmp = ""
	r.prog.finish()
	if err := ix.st.DropCheckpoint(ctx); err != nil {
		opts.Logger.Warn("removing checkpoint", "index", opts.Dir, "err", err)
	}
	if err := ix.st.Drop(ctx, r.gen, prev); err != nil {
		opts.Logger.Warn("removing old generations", "index", opts.Dir, "err", err)
	}
	return man, nil
}

// embedRun is the state of addVectors: the generation read (src), the writer and the
// checkpoint it continues from.
type embedRun struct {
	ix           *Index
	opts         *Options
	eng          *store.Connected
	lexGen, prev int
	src          *Generation // lexGen: the passages to embed
	cpBase       *Generation // the checkpoint the writer continues from; nil: src
	prog         *progress
	w            *genWriter
	gen          int
	tmp          string    // the writer's directory, "" once published or renamed
	next         uint32    // the first key not yet embedded (a resumed run skips those before)
	expect       int       // vectors the next writer will hold in all, when it is the first (0 after)
	last         time.Time // of the last checkpoint
	checkpoints  int
}

// writing is the generation being written.
func (r *embedRun) writing() store.Writing { return store.Writing{Gen: r.gen, Dir: r.tmp} }

// open starts a writer of a new generation derived from base.
func (r *embedRun) open(ctx context.Context, base *Generation, docs handover) error {
	w, err := r.ix.st.Begin(ctx)
	if err != nil {
		return err
	}
	r.gen, r.tmp = w.Gen, w.Dir
	if r.w, err = newGenWriter(r.tmp, r.gen, r.opts, modeAddVectors, base, docs, r.prog, r.expect); err != nil {
		return err
	}
	r.expect = 0
	r.w.start(ctx)
	return nil
}

func (r *embedRun) close(ctx context.Context) {
	if r.w != nil && !r.w.closed {
		r.w.abort()
	}
	if r.w != nil && r.w.log != nil {
		r.w.log.Close() // its runs: the table is written, or the run failed
	}
	if r.tmp != "" {
		r.ix.discard(ctx, r.writing(), r.opts.Logger)
	}
	if r.cpBase != nil {
		r.cpBase.Close()
	}
	r.src.Close()
	r.eng.Close()
}

// embedAll hands every live passage of src from r.next on to the writer's embedder,
// BatchSize passages at a time, checkpointing as it goes, and finishes the writer.
func (r *embedRun) embedAll(ctx context.Context) (*Manifest, error) {
	batch := r.opts.Build.BatchSize
	var job embedJob
	flush := func() error {
		if len(job.keys) == 0 {
			return nil
		}
		j := job
		job = embedJob{}
		if err := r.w.submit(r.w.lex.NewBatch(), j, 0); err != nil {
			return err
		}
		if r.checkpointDue() {
			return r.checkpoint(ctx, j.keys[len(j.keys)-1]+1)
		}
		return nil
	}
	err := r.src.Passages.Each(ctx, func(key uint32, p Passage) error {
		if key < r.next {
			return nil
		}
		job.keys = append(job.keys, key)
		job.texts = append(job.texts, p.Text)
		if len(job.keys) < batch {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if werr := r.w.wait(); err == nil {
		err = werr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return r.w.finish()
}

// checkpointDue: checkpoints are on (CheckpointEvery) and CheckpointAfter has passed.
func (r *embedRun) checkpointDue() bool {
	return r.opts.CheckpointEvery > 0 && r.opts.CheckpointAfter > 0 &&
		time.Since(r.last) >= r.opts.CheckpointAfter
}

// checkpoint commits the vectors so far (keys before next) as a checkpoint generation, not
// live, and continues in a new generation derived from it, the graph kept in memory.
func (r *embedRun) checkpoint(ctx context.Context, next uint32) error {
	start := time.Now()
	if err := r.w.wait(); err != nil {
		return err
	}
	waited := time.Since(start)
	r.w.keepLog, r.w.checkpoint = true, true
	man, err := r.w.finish()
	if err != nil {
		return err
	}
	// The document table goes on to the next writer, as a build's checkpoint hands it on.
	docs := r.w.handover()
	man.Generation, man.Created = r.gen, time.Now().UTC()
	if err := syncTree(r.tmp); err != nil {
		return fmt.Errorf("syncing checkpoint: %w", err)
	}
	if err := manifest.Write(r.tmp, man); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	cp := checkpoint{Generation: manifest.GenerationName(r.gen), Inputs: man.Inputs, InputOptions: inputOptions(r.opts.Inputs), Options: r.opts.Build, SkipBad: r.opts.SkipBad,
		Embedding: &embedPosition{LexicalGeneration: r.lexGen, NextKey: next}}
	recordVectors(&cp, r.opts, man)
	if err := r.ix.st.Commit(ctx, r.writing(), man, store.CommitOptions{Checkpoint: &cp, At: r.opts.at}); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	r.tmp = ""
	r.checkpoints++
	r.last = time.Now()
	if err := r.ix.st.Drop(ctx, r.lexGen, r.prev); err != nil { // drops the previous checkpoint
		r.opts.Logger.Warn("removing old checkpoints", "index", r.opts.Dir, "err", err)
	}
	base, err := r.ix.reopenCheckpoint(ctx, man, r.w.reopen)
	if err != nil {
		return err
	}
	if r.cpBase != nil {
		r.cpBase.Close()
	}
	r.cpBase = base
	// The embedding stands still while a checkpoint runs: say how long, and where.
	r.opts.Logger.Info("checkpoint", "generation", man.Generation, "vectors", man.Dense.Vectors,
		"took", time.Since(start).Round(time.Millisecond), "wait", waited.Round(time.Millisecond),
		"vectors_saved", r.w.finishTook.vectors.Round(time.Millisecond), "checksums", r.w.finishTook.sums.Round(time.Millisecond))
	return r.open(ctx, base, docs)
}

// resumeEmbedding continues the embedding half of a lexical-first build from its checkpoint
// cp (already checked against opts): the BM25 generation it embeds must still be live.
func (ix *Index) resumeEmbedding(ctx context.Context, opts *Options, cp *checkpoint) (*Summary, error) {
	lexGen := cp.Embedding.LexicalGeneration
	live, err := ix.st.Live(ctx)
	if err != nil {
		return nil, err
	}
	if live != lexGen {
		return nil, fmt.Errorf("cannot resume the embedding in %s: its checkpoint embeds generation %d, but generation %d is live (kairos index --force rebuilds)", ix.loc, lexGen, live)
	}
	start := time.Now()
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "resuming the embedding of generation %d from passage key %d\n", lexGen, cp.Embedding.NextKey)
	}
	man, err := ix.addVectors(ctx, opts, lexGen, 0, cp)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, Dense: man.Dense,
		Elapsed: time.Since(start), LexicalGeneration: lexGen, Resumed: man.Counts.Documents, Language: opts.lang}, nil
}
