package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
)

// Index is the index at one location, opened by Open. Its methods run every operation on it
// (Build, Resume, Update, Delete, Compact, Verify, Reader) over its store (indexer/store):
// the same driver whether the generations live in a directory or on a Qdrant cluster.
// Writers take the store's writer lock. An Index is used by one goroutine at a time; Close it
// when done.
type Index struct {
	loc Location
	st  store.Store
}

// Open returns the index at loc: its store, which connects to nothing until an operation
// needs it (a directory is created by the first build).
func Open(ctx context.Context, loc Location) (*Index, error) {
	st, err := openStore(loc)
	if err != nil {
		return nil, err
	}
	return &Index{loc: loc, st: st}, nil
}

// Location is where the index is.
func (ix *Index) Location() Location { return ix.loc }

// Close releases what the index connected to for its own calls; the Generations it opened
// are closed on their own.
func (ix *Index) Close() error { return ix.st.Close() }

// Manifest reads the manifest of the live generation; the error wraps ErrNoIndex when there
// is none.
func (ix *Index) Manifest(ctx context.Context) (*Manifest, error) { return ix.st.Manifest(ctx, 0) }

// ReadOptions say how a generation is opened for reading (store.ReadOptions): how thoroughly
// its files are checked first (Level: CheckCheap, CheckFull), the BM25 parameters it scores
// with, and binary rescoring.
type ReadOptions = store.ReadOptions

// CheckLevel says how thoroughly a generation's files are checked before they are read
// (store.CheckLevel).
type CheckLevel = store.CheckLevel

// Check levels of ReadOptions.Level (store.CheckCheap, store.CheckFull).
const (
	CheckCheap = store.CheckCheap
	CheckFull  = store.CheckFull
)

// Reader opens the live generation for reading, after checking it at o.Level. Later commits
// do not affect it: it keeps reading its own generation. A damaged file is reported as a
// *DamagedError (ErrDamaged).
func (ix *Index) Reader(ctx context.Context, o ReadOptions) (*Generation, error) {
	return ix.open(ctx, 0, o)
}

// VerifyReport lists what Verify checked and what it found (store.VerifyReport).
type VerifyReport = store.VerifyReport

// ErrDamaged is wrapped by every error that reports a damaged index file: a file whose size or
// sha256 differs from the manifest, or one an engine could not read (backend.ErrDamaged).
var ErrDamaged = backend.ErrDamaged

// DamagedError names one damaged file of a generation and what is wrong with it
// (backend.DamagedError).
type DamagedError = backend.DamagedError

// Verify checks the live generation in full: its manifest, every file or record against it,
// and that its parts hold the same passages. It returns an error only when it cannot check at
// all; defects are in the report.
func (ix *Index) Verify(ctx context.Context) (*VerifyReport, error) { return ix.st.Verify(ctx, 0) }

// VerifyCheckpoint checks the generation of the pending checkpoint as Verify checks the live
// one; nil when no build left a checkpoint.
func (ix *Index) VerifyCheckpoint(ctx context.Context) (*VerifyReport, error) {
	cp, err := ix.st.Checkpoint(ctx)
	if err != nil || cp == nil {
		return nil, err
	}
	n, ok := manifest.ParseGeneration(cp.Generation)
	if !ok {
		return nil, fmt.Errorf("%s: the checkpoint names %q, not a generation", ix.loc, cp.Generation)
	}
	return ix.st.Verify(ctx, n)
}

// Checkpoint describes the checkpoint a build left behind, nil when no resumable build is
// pending.
func (ix *Index) Checkpoint(ctx context.Context) (*CheckpointInfo, error) {
	cp, err := ix.st.Checkpoint(ctx)
	if err != nil || cp == nil {
		return nil, err
	}
	n, _ := manifest.ParseGeneration(cp.Generation)
	man, err := ix.st.Manifest(ctx, n)
	if err != nil {
		return nil, err
	}
	return checkpointInfo(cp, man), nil
}

// Build reads the inputs, splits them into passages and writes a new generation of the
// index, then makes it live. An existing index stays live and intact until the new one is
// complete; a failed or cancelled build leaves nothing live of its own but, once it got to
// one, a checkpoint Resume continues from (Options.CheckpointEvery). With an encoder the
// BM25 index is committed first, live at once, and the vectors follow in the next generation
// (unless Options.EmbedInline).
func (ix *Index) Build(ctx context.Context, opts Options) (*Summary, error) {
	if err := ix.prepareBuild(ctx, &opts); err != nil {
		return nil, err
	}
	unlock, err := ix.st.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return ix.build(ctx, &opts)
}

// Resume continues the build whose checkpoint the index holds, with the same inputs and
// options, and ends with the passages a clean build would have. Without a checkpoint it is a
// clean build (Summary.NoCheckpoint). It refuses inputs whose sha256 or options differ from
// the checkpoint's.
func (ix *Index) Resume(ctx context.Context, opts Options) (*Summary, error) {
	if err := ix.prepareBuild(ctx, &opts); err != nil {
		return nil, err
	}
	unlock, err := ix.st.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return ix.resume(ctx, &opts)
}

// Update derives a new generation from the live one: documents of the inputs that are new
// are added, ones whose content hash changed replace their old passages (deleted
// everywhere), unchanged ones are left alone (not embedded again); with DeleteMissing,
// documents absent from the inputs are removed. Searches on the previous generation are
// unaffected; the new one goes live atomically.
func (ix *Index) Update(ctx context.Context, opts UpdateOptions) (*Summary, error) {
	if err := ix.prepare(&opts.Options); err != nil {
		return nil, fmt.Errorf("update options: %w", err)
	}
	if len(opts.Inputs) == 0 {
		return nil, errors.New("update options: no input")
	}
	opts.SetDefaults()
	return ix.derive(ctx, &opts.Options, runSpec{
		mode: modeUpdate, deleteMissing: opts.DeleteMissing,
		compact: opts.CompactRatio >= 0, compactRatio: opts.CompactRatio,
	})
}

// Delete removes documents by id (opts.Inputs must be empty); ids the index does not hold
// are listed in Summary.NotFound.
func (ix *Index) Delete(ctx context.Context, opts UpdateOptions, ids []string) (*Summary, error) {
	if err := ix.prepare(&opts.Options); err != nil {
		return nil, fmt.Errorf("delete options: %w", err)
	}
	if len(opts.Inputs) > 0 || len(ids) == 0 {
		return nil, errors.New("delete: give document ids and no input")
	}
	opts.SetDefaults()
	return ix.derive(ctx, &opts.Options, runSpec{
		mode: modeUpdate, deleteIDs: ids,
		compact: opts.CompactRatio >= 0, compactRatio: opts.CompactRatio,
	})
}

// Compact writes a new generation holding only the live passages: no deleted ones left
// behind, a lexical index written again from the passages and a graph rebuilt from the
// stored vectors (no encoder needed). Keys are renumbered 0..live-1 in their old order.
// Readers of the previous generation are unaffected; the new one goes live atomically. A
// live generation that keeps no deleted passage is reported as it is (Summary.Compacted
// false): an index on Qdrant removes deleted passages as it goes.
func (ix *Index) Compact(ctx context.Context, o CompactOptions) (*Summary, error) {
	return ix.compact(ctx, &Options{Logger: o.Logger, Progress: o.Progress})
}

// CompactOptions are a compaction's options; the zero value logs nothing and shows no
// progress.
type CompactOptions struct {
	// Logger receives warnings (nil: none).
	Logger *slog.Logger
	// Progress receives a status line about once a second (every few seconds where it is
	// not a terminal): passages copied of those live, indexed and, in a dense index, their
	// vectors added; nil for none.
	Progress io.Writer
}

// prepare validates opts for an operation on ix: Dir, when set, must name ix (Summary.Dir
// reports it).
func (ix *Index) prepare(opts *Options) error {
	if opts.Dir != "" && opts.Dir != ix.loc.String() {
		return fmt.Errorf("the options name the index %s, not %s", opts.Dir, ix.loc)
	}
	opts.Dir = ix.loc.String()
	return opts.validate()
}

// prepareBuild validates the options of a build and settles its language.
func (ix *Index) prepareBuild(ctx context.Context, opts *Options) error {
	if err := ix.prepare(opts); err != nil {
		return fmt.Errorf("build options: %w", err)
	}
	if len(opts.Inputs) == 0 {
		return errors.New("build options: no input")
	}
	return opts.resolveLanguage(ctx)
}

// engines connects the engines of a writer of opts (a new index, or one derived from base)
// and settles what the manifest records of them: the lexical engine's name and the
// collections' settings. The caller closes them.
func (ix *Index) engines(ctx context.Context, opts *Options, base *Manifest) (*store.Connected, error) {
	if err := opts.adoptVectorIndex(base); err != nil {
		return nil, err
	}
	// A writer derived from a generation without vectors (the embedding half of a
	// --bm25-first build) embeds its passages: their count chooses the kind of index.
	vectors, from := 0, DefaultIVFFrom
	if base != nil && base.Dense == nil {
		vectors = base.Counts.Passages
	}
	if opts.ivfFrom != 0 {
		from = opts.ivfFrom
	}
	eng, err := ix.st.Engines(ctx, store.EngineSpec{Base: base, Lexical: opts.Build.Lexical, Dim: encoderDim(opts),
		HNSW: opts.HNSW, VectorIndex: opts.VectorIndex, Vectors: vectors, IVFFrom: from, IVF: opts.IVF,
		RAMBudget: opts.RAMBudget, Collections: opts.Qdrant, Override: opts.Engines, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	opts.Build.Lexical, opts.Build.Qdrant, opts.eng, opts.vectorKind = eng.LexicalName, eng.Qdrant, eng.Engines, eng.VectorIndex
	return eng, nil
}

// encoderDim is the dimension of the vectors a writer of opts embeds (0: none).
func encoderDim(opts *Options) int {
	if opts.Encoder != nil {
		return opts.Encoder.Identity().Dim
	}
	return 0
}

// open opens generation gen (0: the live one) for reading.
func (ix *Index) open(ctx context.Context, gen int, o ReadOptions) (*Generation, error) {
	p, err := ix.st.Open(ctx, gen, o)
	if err != nil {
		return nil, err
	}
	return &Generation{Dir: p.Where, Manifest: p.Manifest, Passages: p.Passages, Lexical: p.Lexical, Vectors: p.Vectors, Hybrid: p.Hybrid,
		Outdated: p.Outdated, st: ix.st, release: p.Release}, nil
}

// discard removes what the uncommitted writer w left, with a deadline of its own: the
// operation's context may be over.
func (ix *Index) discard(ctx context.Context, w store.Writing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := ix.st.Discard(ctx, w); err != nil {
		log.Warn("removing unfinished generation", "index", ix.loc.String(), "generation", w.Gen, "err", err)
	}
}
