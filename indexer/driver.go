package indexer

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
)

// driver owns the writer side of drive.
type driver struct {
	ix          *Index
	opts        *Options
	copies      bool // a checkpoint copies the generation (store.Connected.CheckpointCopies)
	spec        runSpec
	prog        *progress
	prev        int
	inputs      func() ([]Input, error)
	readErr     func() error // why the reader stopped, once batches is closed (nil: end of input)
	tmp         string       // directory being written
	gen         int          // the generation being written in tmp
	w           *genWriter
	upd         UpdateCounts
	notFound    []string
	checkpoints int
	cpBase      *Generation // the checkpoint the writer continues from, opened here
	compacted   bool
	compactErr  string
}

func (d *driver) update() *UpdateCounts {
	if d.spec.mode != modeUpdate {
		return nil
	}
	return &d.upd
}

// open starts a new generation derived from base (nil: from scratch). docs is base's document
// table when it is already in memory (see newGenWriter), else nil.
func (d *driver) open(ctx context.Context, base *Generation, docs handover) error {
	w, err := d.ix.st.Begin(ctx)
	if err != nil {
		return err
	}
	d.tmp, d.gen = w.Dir, w.Gen
	if d.w, err = newGenWriter(d.tmp, d.gen, d.opts, d.spec.mode, base, docs, d.prog, 0); err != nil {
		return err
	}
	if d.spec.mode == modeUpdate {
		// An update's manifest describes its own inputs and reader counts.
		d.w.man.Inputs = nil
		d.w.man.Counts.Skipped, d.w.man.Counts.Bad, d.w.man.Counts.Repaired, d.w.man.Counts.URLsRemoved = map[string]int{}, 0, 0, 0
	}
	d.w.start(ctx)
	return nil
}

func (d *driver) write(ctx context.Context, batches <-chan docBatch) (*Manifest, error) {
	if err := d.open(ctx, d.spec.base, handover{}); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok && d.w != nil { // nil: a checkpoint's next writer failed to start
			d.w.abort()
		}
		if d.w != nil && d.w.log != nil {
			d.w.log.Close() // its runs: the table is written, or the build failed
		}
		d.releaseCheckpointBase()
	}()
	sinceCheckpoint, lastCheckpoint := 0, time.Now()
	idle := time.Now() // the writer's waits for batches are left out of its busy time
	for b := range batches {
		d.prog.writerWaited(time.Since(idle))
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
		if d.checkpointDue(sinceCheckpoint, time.Since(lastCheckpoint)) {
			if err := d.checkpoint(ctx, pos); err != nil {
				return nil, err
			}
			sinceCheckpoint, lastCheckpoint = 0, time.Now()
		}
		idle = time.Now()
	}
	d.prog.writerWaited(time.Since(idle))
	if d.readErr != nil { // the input ended by failing, not at its end
		if err := d.readErr(); err != nil {
			return nil, err
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
		if bad := d.w.man.Counts.Bad; bad > 0 && len(missing) > 0 {
			// A malformed record skipped (--skip-bad) may be the new copy of a document that
			// seems missing: deleting on its evidence would lose the old copy. Nothing missing
			// is deleted; the summary says so.
			d.w.upd.MissingKept = len(missing)
			d.opts.Logger.Warn("--delete-missing deleted nothing: malformed records were skipped, and any of them may be a missing document's new copy",
				"index", d.opts.Dir, "missing", len(missing), "bad", bad)
		} else if _, err := d.w.deleteDocs(missing); err != nil {
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
		d.ix.discard(ctx, d.writing(), d.opts.Logger)
		d.tmp = ""
		// The live generation's, but with this update's reader counts, as a committed
		// update's manifest has them: malformed records it skipped are reported, not lost.
		m := *d.spec.base.Manifest
		c := d.w.man.Counts
		m.Counts.Skipped, m.Counts.Bad, m.Counts.Repaired, m.Counts.URLsRemoved = c.Skipped, c.Bad, c.Repaired, c.URLsRemoved
		return &m, nil
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
	if err := d.ix.st.Commit(ctx, d.writing(), man, store.CommitOptions{At: d.opts.at}); err != nil {
		return nil, fmt.Errorf("committing generation %d: %w", gen, err)
	}
	d.tmp = ""
	if d.spec.mode == modeAppend { // a build's own checkpoint; an update leaves a pending build's alone
		if err := d.ix.st.DropCheckpoint(ctx); err != nil {
			d.opts.Logger.Warn("removing checkpoint", "index", d.opts.Dir, "err", err)
		}
		if err := d.opts.at("checkpoint-removed"); err != nil {
			return nil, err
		}
	}
	if err := d.ix.st.Drop(ctx, gen, d.prev); err != nil {
		d.opts.Logger.Warn("removing old generations", "index", d.opts.Dir, "err", err)
	}
	if err := d.opts.at("old-removed"); err != nil {
		return nil, err
	}
	if d.spec.compact && d.spec.compactRatio > 0 && man.Tombstones > 0 &&
		float64(man.Tombstones) > d.spec.compactRatio*float64(man.Tombstones+man.Counts.Passages) {
		cman, err := d.ix.compactGen(ctx, d.opts, gen, d.prev)
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

// checkpointDue reports whether a checkpoint is due after since passages and elapsed time
// since the last one. A local build that embeds checkpoints by time alone (CheckpointAfter):
// at tens of passages a second on a CPU, CheckpointEvery's count would take hours to reach (a
// 13,000-passage corpus never does) and an interrupted build would lose all of it, while a
// graph save every few minutes costs seconds. Other builds need both the count and the time.
func (d *driver) checkpointDue(since int, elapsed time.Duration) bool {
	n := d.checkpointInterval()
	if n <= 0 || since == 0 {
		return false
	}
	if d.opts.Encoder != nil && !d.copies && d.opts.CheckpointAfter > 0 {
		return elapsed >= d.opts.CheckpointAfter
	}
	return since >= n && elapsed >= d.opts.CheckpointAfter
}

// checkpointInterval is CheckpointEvery, raised to a tenth of the passages written so far when
// the index has a graph: each checkpoint rewrites the whole graph file, and growing intervals
// bound the total written to about ten graphs' worth instead of growing with the square of
// the corpus. Store segments and bleve files are shared by link and cost nothing to carry.
func (d *driver) checkpointInterval() int {
	n := d.opts.CheckpointEvery
	// A checkpoint that copies every point into the next generation (Qdrant) grows too.
	if n > 0 && (d.w.vec != nil || d.copies) {
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
			ins[i].Format, ins[i].Source, ins[i].Columns = man.Inputs[i].Format, man.Inputs[i].Source, man.Inputs[i].Columns
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
	if err := manifest.Write(d.tmp, man); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	return d.opts.at("manifest-written")
}

// checkpoint commits what is written so far as a checkpoint generation and continues in a new
// generation derived from it. The graph stays in memory; everything else is reopened.
func (d *driver) checkpoint(ctx context.Context, pos position) error {
	start := time.Now()
	if err := d.w.wait(); err != nil {
		return err
	}
	waited := time.Since(start)
	d.w.keepLog, d.w.checkpoint = true, true
	man, err := d.w.finish()
	if err != nil {
		return err
	}
	// The graph a checkpoint keeps in memory (d.w.reopen) is no writer's until the next one
	// takes it over (open): a failure before then releases it here, or the file of its
	// spilled float vectors stays open, and its file system busy, until the process ends.
	// Closing it twice is harmless, should the next writer have taken it and failed.
	kept, handed := d.w, false
	defer func() {
		if !handed && kept.reopen != nil {
			kept.vec.Abort()
		}
	}()
	// The table just written goes on in memory: reading it back would hold a second copy
	// while the first is collected, and it grows with the collection.
	docs := d.w.handover()
	if err := d.opts.at("checkpoint-finished"); err != nil {
		return err
	}
	gen, took := d.w.gen, d.w.finishTook
	t0 := time.Now()
	if err := d.seal(man, gen); err != nil {
		return err
	}
	sealed := time.Since(t0)
	base, err := d.commitCheckpoint(ctx, gen, man, pos, d.w.reopen)
	if err != nil {
		return err
	}
	d.releaseCheckpointBase()
	d.cpBase = base
	if err := d.open(ctx, base, docs); err != nil {
		return err
	}
	handed = true
	// The build stands still while a checkpoint runs: say where the time went.
	d.opts.Logger.Info("checkpoint", "generation", gen, "passages", man.Counts.Passages,
		"took", time.Since(start).Round(time.Millisecond), "wait", waited.Round(time.Millisecond),
		"lexical", took.lexical.Round(time.Millisecond), "documents", took.docs.Round(time.Millisecond),
		"vectors", took.vectors.Round(time.Millisecond), "checksums", took.sums.Round(time.Millisecond),
		"sync", sealed.Round(time.Millisecond))
	return nil
}

// releaseCheckpointBase closes what is left open of the checkpoint the writer continued from
// (its passage store, or its connection: the writer took its vectors over).
func (d *driver) releaseCheckpointBase() {
	if d.cpBase != nil {
		d.cpBase.Close()
		d.cpBase = nil
	}
}

// writing is the generation being written.
func (d *driver) writing() store.Writing { return store.Writing{Gen: d.gen, Dir: d.tmp} }

// commitCheckpoint commits generation gen, sealed in d.tmp, as the checkpoint at pos, drops
// the previous checkpoint, and returns the generation opened as the base the build goes on
// from. A graph the vector writer kept in memory (reopen: hnswvec's) goes on from memory
// rather than being loaded again; other parts are opened from the store.
func (d *driver) commitCheckpoint(ctx context.Context, gen int, man *Manifest, pos position, reopen func(backend.Meta) backend.VectorReader) (*Generation, error) {
	cp := checkpoint{Generation: manifest.GenerationName(gen), Position: pos, Inputs: man.Inputs, InputOptions: inputOptions(d.opts.Inputs),
		Options: d.opts.Build, SkipBad: d.opts.SkipBad}
	if d.opts.Encoder != nil {
		recordVectors(&cp, d.opts, man)
	}
	if err := d.ix.st.Commit(ctx, d.writing(), man, store.CommitOptions{Checkpoint: &cp, At: d.opts.at}); err != nil {
		return nil, fmt.Errorf("writing checkpoint: %w", err)
	}
	d.tmp = ""
	d.checkpoints++
	if err := d.opts.at("checkpoint-recorded"); err != nil {
		return nil, err
	}
	if err := d.ix.st.Drop(ctx, d.prev); err != nil { // drops the previous checkpoint
		d.opts.Logger.Warn("removing old checkpoints", "index", d.opts.Dir, "err", err)
	}
	if err := d.opts.at("checkpoint-cleaned"); err != nil {
		return nil, err
	}
	return d.ix.reopenCheckpoint(ctx, man, reopen)
}
