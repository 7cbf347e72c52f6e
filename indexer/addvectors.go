package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// resumeAddVectors finishes a LexicalFirst build interrupted while embedding: the live
// generation holds the BM25 index of these inputs and options, without vectors. It returns
// nil when the live generation is not such a one (Resume then builds from scratch).
func resumeAddVectors(ctx context.Context, opts *Options) (*Summary, error) {
	lexGen := liveGen(opts.Dir)
	if lexGen == 0 {
		return nil, nil
	}
	man, err := ReadManifest(filepath.Join(opts.Dir, manifest.GenerationName(lexGen)))
	if err != nil || man.Dense != nil {
		return nil, nil
	}
	cp := checkpoint{Inputs: man.Inputs, Options: man.Options}
	lex := *opts
	lex.Encoder = nil
	if lex.Build.Lexical == "" { // naming no engine continues in the generation's
		lex.Build.Lexical = man.Options.Lexical
	}
	if checkpointMatches(&cp, &lex) != nil {
		return nil, nil
	}
	if err := opts.useLexical(man.Options.Lexical); err != nil {
		return nil, err
	}
	start := time.Now()
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "resuming: generation %d holds the BM25 index of these inputs; embedding its %d passages\n", lexGen, man.Counts.Passages)
	}
	dm, err := addVectors(ctx, opts, lexGen, 0, nil)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: dm.Generation, Counts: dm.Counts, Dense: dm.Dense,
		Elapsed: time.Since(start), LexicalGeneration: lexGen, Resumed: man.Counts.Documents, Language: opts.lang}, nil
}

// buildLexicalFirst is a LexicalFirst build (Options.LexicalFirst): the inputs are indexed
// without the encoder and committed, so BM25 answers while the vectors are embedded; then
// addVectors writes the next generation with them. from is where reading starts (a resumed
// build) and base the checkpoint it continues (nil: from scratch). The caller holds the
// writer lock.
func buildLexicalFirst(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	start := time.Now()
	prev := liveGen(opts.Dir) // the index this build replaces, kept one round as builds keep it
	lex := *opts
	lex.Encoder = nil
	sum, err := drive(ctx, &lex, spec)
	if err != nil {
		return nil, err
	}
	sum.LexicalGeneration, sum.LexicalElapsed = sum.Generation, time.Since(start)
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "BM25 index committed as generation %d and searchable; embedding its %d passages into the next generation\n",
			sum.Generation, sum.Counts.Passages)
	}
	man, err := addVectors(ctx, opts, sum.Generation, prev, nil)
	if err != nil {
		return nil, err
	}
	sum.Generation, sum.Dense, sum.Elapsed = man.Generation, man.Dense, time.Since(start)
	return sum, nil
}

// addVectors writes the generation after lexGen (a BM25-only generation): the same
// passages, lexical index, store and documents, shared by hard link where the engines
// allow, plus the vectors of every live passage, embedded in key order; then makes it live
// and drops the generations other than it and prev. With checkpoints on (CheckpointEvery),
// it commits a checkpoint generation every CheckpointAfter (the vectors so far; CHECKPOINT
// says up to which key) that Resume continues from; lexGen stays live meanwhile. from, when
// not nil, is such a checkpoint to continue.
func addVectors(ctx context.Context, opts *Options, lexGen, prev int, from *checkpoint) (*Manifest, error) {
	src, err := openGen(ctx, filepath.Join(opts.Dir, manifest.GenerationName(lexGen)), OpenOptions{SkipVectors: true, Trusted: true})
	if err != nil {
		return nil, fmt.Errorf("opening generation %d to embed its passages: %w", lexGen, err)
	}
	r := &embedRun{opts: opts, gens: dirStore{dir: opts.Dir, at: opts.at}, lexGen: lexGen, prev: prev, src: src, last: time.Now()}
	defer r.close()
	n := src.Manifest.Counts.Passages
	r.prog = newProgress(opts.Progress, 1, true)
	r.prog.read(1, src.Manifest.Counts.Documents) // the input is read: the line shows the embedding
	r.prog.passagesSplit(n)
	r.prog.passagesIndexed(n)
	r.prog.inputsRead()
	base := src
	if from != nil {
		if base, err = OpenGeneration(filepath.Join(opts.Dir, from.Generation)); err != nil {
			return nil, fmt.Errorf("opening checkpoint %s: %w", from.Generation, err)
		}
		base.Lexical.Close() // the writer copies the engine's files; it never reads the base's index
		base.Lexical = nil
		r.cpBase, r.next = base, from.Embedding.NextKey
		r.prog.passagesEmbedded(base.Vectors.Live())
	}
	if err := r.open(ctx, base, handover{}); err != nil {
		return nil, err
	}
	// How many vectors are coming is known: the graph is allocated once, at its final size (it
	// stays in memory across checkpoints, Reopener).
	if rv, ok := r.w.vec.(backend.Reserver); ok && n > r.w.vec.Len() {
		left := n - r.w.vec.Len()
		if err := rv.Reserve(left); err != nil {
			return nil, fmt.Errorf("making room in the graph for %d more vectors: %w", left, err)
		}
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
	if err := r.gens.Commit(ctx, r.gen, r.tmp, man); err != nil {
		return nil, fmt.Errorf("committing generation %d: %w", r.gen, err)
	}
	r.tmp = ""
	r.prog.finish()
	if err := r.gens.dropCheckpoint(); err != nil {
		opts.Logger.Warn("removing checkpoint", "dir", opts.Dir, "err", err)
	}
	if err := r.gens.Drop(ctx, r.gen, prev); err != nil {
		opts.Logger.Warn("removing old generations", "dir", opts.Dir, "err", err)
	}
	return man, nil
}

// embedRun is the state of addVectors: the generation read (src), the writer and the
// checkpoint it continues from.
type embedRun struct {
	opts         *Options
	gens         dirStore // a LexicalFirst build is a local directory's (dirStore.build)
	lexGen, prev int
	src          *Generation // lexGen: the passages to embed
	cpBase       *Generation // the checkpoint the writer continues from; nil: src
	prog         *progress
	w            *genWriter
	gen          int
	tmp          string    // the writer's directory, "" once published or renamed
	next         uint32    // the first key not yet embedded (a resumed run skips those before)
	last         time.Time // of the last checkpoint
	checkpoints  int
}

// open starts a writer of a new generation derived from base.
func (r *embedRun) open(ctx context.Context, base *Generation, docs handover) error {
	gen, tmp, err := r.gens.Begin(ctx)
	if err != nil {
		return err
	}
	r.gen, r.tmp = gen, tmp
	if r.w, err = newGenWriter(tmp, gen, r.opts, modeAddVectors, base, docs, r.prog); err != nil {
		return err
	}
	r.w.start(ctx)
	return nil
}

func (r *embedRun) close() {
	if r.w != nil && !r.w.closed {
		r.w.abort()
	}
	if r.w != nil && r.w.log != nil {
		r.w.log.Close() // its runs: the table is written, or the run failed
	}
	if r.tmp != "" {
		r.gens.Discard(r.gen, r.tmp)
	}
	if r.cpBase != nil {
		r.cpBase.store.Close()
	}
	if r.src.Lexical != nil {
		r.src.Lexical.Close()
	}
	r.src.store.Close()
}

// embedAll hands every live passage of src from r.next on to the writer's embedder,
// BatchSize passages at a time, checkpointing as it goes, and finishes the writer.
func (r *embedRun) embedAll(ctx context.Context) (*Manifest, error) {
	batch := r.opts.Build.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
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
	err := r.src.store.Each(ctx, func(key uint32, p Passage) error {
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
	vec := r.w.vec
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
	final := filepath.Join(r.opts.Dir, manifest.GenerationName(r.gen))
	if err := os.Rename(r.tmp, final); err != nil {
		return err
	}
	r.tmp = ""
	if err := atomicfile.SyncDir(r.opts.Dir); err != nil {
		return err
	}
	id := r.opts.Encoder.Identity()
	cp := checkpoint{Generation: manifest.GenerationName(r.gen), Inputs: man.Inputs, Options: r.opts.Build, SkipBad: r.opts.SkipBad,
		Model: &id, HNSW: &man.Dense.HNSW, Embedding: &embedPosition{LexicalGeneration: r.lexGen, NextKey: next}}
	if err := manifest.WriteCheckpoint(r.opts.Dir, &cp); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	r.checkpoints++
	r.last = time.Now()
	if err := cleanOld(r.opts.Dir, r.lexGen, r.prev); err != nil { // drops the previous checkpoint
		r.opts.Logger.Warn("removing old checkpoints", "dir", r.opts.Dir, "err", err)
	}
	base, err := openGen(ctx, final, OpenOptions{SkipVectors: true, Trusted: true})
	if err != nil {
		return fmt.Errorf("reopening checkpoint: %w", err)
	}
	base.Lexical.Close() // the writer copies the engine's files; it never reads the base's index
	base.Lexical = nil
	if rv, ok := vec.(backend.Reopener); ok {
		base.Vectors = rv.Reopen(base.store)
	} else if base.Vectors, err = openVectors(ctx, r.opts.Engines.Vectors, backend.Gen{Name: manifest.GenerationName(r.gen), Dir: final}, man, base.store); err != nil {
		return fmt.Errorf("reopening checkpoint: %w", err)
	}
	if r.cpBase != nil {
		r.cpBase.store.Close()
	}
	r.cpBase = base
	// The embedding stands still while a checkpoint runs: say how long, and where.
	r.opts.Logger.Info("checkpoint", "generation", man.Generation, "vectors", man.Dense.Vectors,
		"took", time.Since(start).Round(time.Millisecond), "wait", waited.Round(time.Millisecond),
		"vectors_saved", r.w.finishTook.vectors.Round(time.Millisecond), "checksums", r.w.finishTook.sums.Round(time.Millisecond))
	return r.open(ctx, base, docs)
}

// resumeEmbedding continues the embedding half of a LexicalFirst build from its checkpoint
// cp (already checked against opts): the BM25 generation it embeds must still be live.
func resumeEmbedding(ctx context.Context, opts *Options, cp *checkpoint) (*Summary, error) {
	lexGen := cp.Embedding.LexicalGeneration
	if live := liveGen(opts.Dir); live != lexGen {
		return nil, fmt.Errorf("cannot resume the embedding in %s: its checkpoint embeds generation %d, but generation %d is live (kairos index --force rebuilds)", opts.Dir, lexGen, live)
	}
	start := time.Now()
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "resuming the embedding of generation %d from passage key %d\n", lexGen, cp.Embedding.NextKey)
	}
	man, err := addVectors(ctx, opts, lexGen, 0, cp)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, Dense: man.Dense,
		Elapsed: time.Since(start), LexicalGeneration: lexGen, Resumed: man.Counts.Documents, Language: opts.lang}, nil
}
