package indexer

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// resumeAddVectors finishes a LexicalFirst build interrupted while embedding: the live
// generation holds the BM25 index of these inputs and options, without vectors. It returns
// nil when the live generation is not such a one (Resume then builds from scratch).
func resumeAddVectors(ctx context.Context, opts *Options) (*Summary, error) {
	lexGen := liveGen(opts.Dir)
	if lexGen == 0 {
		return nil, nil
	}
	man, err := ReadManifest(filepath.Join(opts.Dir, genName(lexGen)))
	if err != nil || man.Dense != nil {
		return nil, nil
	}
	cp := checkpoint{Inputs: man.Inputs, Options: man.Options}
	lex := *opts
	lex.Encoder = nil
	if lex.Build.Lexical == "" { // naming no engine continues in the generation's
		lex.Build.Lexical = man.Options.Lexical
	}
	if cp.matches(&lex) != nil {
		return nil, nil
	}
	if err := opts.useLexical(man.Options.Lexical); err != nil {
		return nil, err
	}
	start := time.Now()
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "resuming: generation %d holds the BM25 index of these inputs; embedding its %d passages\n", lexGen, man.Counts.Passages)
	}
	dm, err := addVectors(ctx, opts, lexGen, 0)
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
	man, err := addVectors(ctx, opts, sum.Generation, prev)
	if err != nil {
		return nil, err
	}
	sum.Generation, sum.Dense, sum.Elapsed = man.Generation, man.Dense, time.Since(start)
	return sum, nil
}

// addVectors writes the generation after lexGen (a BM25-only generation): the same
// passages, lexical index, store and documents, shared by hard link where the engines
// allow, plus the vectors of every live passage, embedded in key order; then makes it live
// and drops the generations other than it and prev. Embedding has no checkpoints: an
// interruption leaves lexGen live, and Resume starts the embedding again from it.
func addVectors(ctx context.Context, opts *Options, lexGen, prev int) (*Manifest, error) {
	base, err := openGen(ctx, filepath.Join(opts.Dir, genName(lexGen)), OpenOptions{SkipVectors: true, Trusted: true})
	if err != nil {
		return nil, fmt.Errorf("opening generation %d to embed its passages: %w", lexGen, err)
	}
	defer func() {
		if base.Lexical != nil {
			base.Lexical.Close()
		}
		base.Store.Close()
	}()
	n := base.Manifest.Counts.Passages
	prog := newProgress(opts.Progress, 1, true)
	prog.read(1, base.Manifest.Counts.Documents) // the input is read: the line shows the embedding
	prog.passagesSplit(n)
	prog.passagesIndexed(n)
	prog.inputsRead()
	gens := opts.gens()
	gen, tmp, err := gens.create(ctx)
	if err != nil {
		return nil, err
	}
	published := false
	defer func() {
		if !published {
			gens.discard(gen, tmp)
		}
	}()
	w, err := newGenWriter(tmp, gen, opts, modeAddVectors, base, nil, prog)
	if err != nil {
		return nil, err
	}
	stop := prog.start()
	man, err := embedAll(ctx, w, base, opts.Build.BatchSize)
	stop()
	if err != nil {
		return nil, err
	}
	man.Generation, man.Created = gen, time.Now().UTC()
	if err := syncTree(tmp); err != nil {
		return nil, fmt.Errorf("syncing new generation: %w", err)
	}
	if err := writeManifest(tmp, man); err != nil {
		return nil, fmt.Errorf("writing manifest: %w", err)
	}
	if err := gens.publish(ctx, gen, tmp, man); err != nil {
		return nil, fmt.Errorf("committing generation %d: %w", gen, err)
	}
	published = true
	prog.finish()
	if err := gens.clean(ctx, gen, prev); err != nil {
		opts.Logger.Warn("removing old generations", "dir", opts.Dir, "err", err)
	}
	return man, nil
}

// embedAll hands every live passage of base to w's embedder, batch passages at a time, and
// finishes w.
func embedAll(ctx context.Context, w *genWriter, base *Generation, batch int) (*Manifest, error) {
	ok := false
	defer func() {
		if !ok {
			w.abort()
		}
	}()
	w.start(ctx)
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	var job embedJob
	err := base.Store.Each(func(key uint32, p Passage) error {
		job.keys = append(job.keys, key)
		job.texts = append(job.texts, p.Text)
		if len(job.keys) < batch {
			return nil
		}
		j := job
		job = embedJob{}
		return w.submit(w.lex.NewBatch(), j, 0)
	})
	if err == nil && len(job.keys) > 0 {
		err = w.submit(w.lex.NewBatch(), job, 0)
	}
	if werr := w.wait(); err == nil {
		err = werr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	ok = true // finish releases the writer's files, whatever it returns
	return w.finish()
}
