package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/genstore"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// remote is a store that keeps generations away from the local disk, each in its own
// engines' parts (qdrant.Store: a collection on a Qdrant cluster). remoteStore runs the
// driver over it: what is common to every build, update and resume stays here, and what
// depends on where the generations live stays behind this interface.
type remote interface {
	Live(ctx context.Context) (int, error)
	Begin(ctx context.Context) (gen int, dir string, err error)
	Commit(ctx context.Context, gen int, dir string, man *manifest.Manifest) error
	Drop(ctx context.Context, live, prev int) error
	Discard(gen int, dir string)
	Close() error
	Manifest(ctx context.Context) (*manifest.Manifest, error)
	// Open opens the live generation; OpenGen a committed one that is not live.
	Open(ctx context.Context, o genstore.ReadOptions) (*genstore.Parts, error)
	OpenGen(ctx context.Context, gen, dim int) (*genstore.Parts, error)
	Verify(ctx context.Context) (*genstore.VerifyReport, error)
	// CheckBuild refuses, before connecting, what a build there cannot do.
	CheckBuild(lexical string, binaryCodes bool) error
	// Writers connects the engines of a build of vectors of dim (0: none); DeriveWriters
	// those of an update or delete on top of the generation base describes.
	Writers(ctx context.Context, dim int) (*genstore.Writers, error)
	DeriveWriters(ctx context.Context, base *manifest.Manifest) (*genstore.Writers, error)
	// SaveCheckpoint stores a sealed generation as the build's checkpoint, which Drop keeps
	// until Keep(0); PendingCheckpoint finds it again after a crash, and GenManifest reads
	// its generation's manifest.
	SaveCheckpoint(ctx context.Context, gen int, dir string, man *manifest.Manifest, cp *manifest.Checkpoint) error
	PendingCheckpoint(ctx context.Context) (*manifest.Checkpoint, error)
	GenManifest(ctx context.Context, gen string) (*manifest.Manifest, error)
	Keep(gen int)
}

// remoteStore is the Store of an index whose generations live in a remote store.
type remoteStore struct {
	r   remote
	loc Location
}

var _ Store = (*remoteStore)(nil)

func (s *remoteStore) Location() Location                             { return s.loc }
func (s *remoteStore) Live(ctx context.Context) (int, error)          { return s.r.Live(ctx) }
func (s *remoteStore) Begin(ctx context.Context) (int, string, error) { return s.r.Begin(ctx) }
func (s *remoteStore) Commit(ctx context.Context, gen int, dir string, man *Manifest) error {
	return s.r.Commit(ctx, gen, dir, man)
}
func (s *remoteStore) Drop(ctx context.Context, live, prev int) error {
	return s.r.Drop(ctx, live, prev)
}
func (s *remoteStore) Discard(gen int, dir string) { s.r.Discard(gen, dir) }
func (s *remoteStore) Close() error                { return s.r.Close() }
func (s *remoteStore) Manifest(ctx context.Context) (*Manifest, error) {
	return s.r.Manifest(ctx)
}
func (s *remoteStore) Verify(ctx context.Context) (*VerifyReport, error) { return s.r.Verify(ctx) }

// checkpointCopies: a checkpoint is a whole generation, copied into the next collection.
func (s *remoteStore) checkpointCopies() bool { return true }

// checkpointDir: a remote checkpoint is not a directory.
func (s *remoteStore) checkpointDir() (string, error) { return "", nil }

// dropCheckpoint: the next Drop removes the checkpoint's generation.
func (s *remoteStore) dropCheckpoint() error {
	s.r.Keep(0)
	return nil
}

// Open opens the live generation. o.Level, Engines and Trusted do not apply, and
// o.BinaryRescore is refused (a cluster's vectors have no binary codes).
func (s *remoteStore) Open(ctx context.Context, o OpenOptions) (*Generation, error) {
	if o.BinaryRescore != "" {
		return nil, errors.New("binary rescoring (--binary-rescore) applies to a local index with binary codes, not to one on a Qdrant cluster")
	}
	p, err := s.r.Open(ctx, genstore.ReadOptions{BM25: o.BM25, SkipVectors: o.SkipVectors})
	if err != nil {
		return nil, err
	}
	return remoteGeneration(p), nil
}

// remoteGeneration is the Generation of parts opened by a remote store.
func remoteGeneration(p *genstore.Parts) *Generation {
	return &Generation{Dir: p.Where, Manifest: p.Manifest, Passages: p.Passages, Lexical: p.Lexical, Vectors: p.Vectors, src: &remoteGen{p: p}}
}

// PendingCheckpoint describes the newest checkpoint above the live generation.
func (s *remoteStore) PendingCheckpoint(ctx context.Context) (*CheckpointInfo, error) {
	cp, err := s.r.PendingCheckpoint(ctx)
	if err != nil || cp == nil {
		return nil, err
	}
	man, err := s.r.GenManifest(ctx, cp.Generation)
	if err != nil {
		return nil, err
	}
	return checkpointInfo(cp, man), nil
}

// compact: updates in a remote store delete points rather than tombstone them, so there is
// nothing to drop, and the live generation is reported as it is.
func (s *remoteStore) compact(ctx context.Context, opts *Options) (*Summary, error) {
	start := time.Now()
	man, err := s.Manifest(ctx)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, Dense: man.Dense, Elapsed: time.Since(start)}, nil
}

// buildDim is the dense dimension of the generations a build of opts writes (0: none).
func buildDim(opts *Options) int {
	if opts.Encoder != nil {
		return opts.Encoder.Identity().Dim
	}
	return 0
}

// writers connects the engines of a build of opts (validated) and points opts at them and
// at this store; the caller closes them.
func (s *remoteStore) writers(ctx context.Context, opts *Options) (*genstore.Writers, error) {
	if err := s.r.CheckBuild(opts.Build.Lexical, opts.Encoder != nil && opts.HNSW.CodesKind() == hnsw.CodesBinary); err != nil {
		return nil, err
	}
	w, err := s.r.Writers(ctx, buildDim(opts))
	if err != nil {
		return nil, err
	}
	s.use(opts, w)
	opts.Build.Lexical = LexicalQdrant
	return w, nil
}

// use points opts at the engines w and at this store.
func (s *remoteStore) use(opts *Options, w *genstore.Writers) {
	opts.Engines = Engines{Passages: w.Passages, Lexical: w.Lexical, Vectors: w.Vectors}
	qb := w.Build
	opts.Build.Qdrant = &qb
	opts.store = s
}

// build builds opts (validated) into the remote store.
func (s *remoteStore) build(ctx context.Context, opts *Options) (*Summary, error) {
	w, err := s.writers(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return drive(ctx, opts, runSpec{mode: modeAppend})
}

// derive runs spec (an update or a delete) on top of the live generation: the new
// generation starts as a copy of the live one.
func (s *remoteStore) derive(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	base, err := s.Open(ctx, OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer base.Close()
	if err := opts.adoptBase(ctx, base.Manifest); err != nil {
		return nil, err
	}
	w, err := s.r.DeriveWriters(ctx, base.Manifest)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	s.use(opts, w)
	if err := opts.adoptLexical(base.Manifest); err != nil {
		return nil, err
	}
	spec.base = base
	return drive(ctx, opts, spec)
}

// resume continues the build whose checkpoint the store holds, or builds from scratch when
// there is none. opts are validated.
func (s *remoteStore) resume(ctx context.Context, opts *Options) (*Summary, error) {
	w, err := s.writers(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	cp, err := s.r.PendingCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("finding the checkpoint of %s: %w", s.loc, err)
	}
	if cp == nil {
		opts.Logger.Info("no checkpoint: building from scratch", "index", s.loc.String())
		sum, err := drive(ctx, opts, runSpec{mode: modeAppend})
		if sum != nil {
			sum.NoCheckpoint = true
		}
		return sum, err
	}
	if err := checkpointMatches(cp, opts); err != nil {
		return nil, fmt.Errorf("cannot resume the build in %s: %w", s.loc, err)
	}
	n, _ := manifest.ParseGeneration(cp.Generation)
	p, err := s.r.OpenGen(ctx, n, buildDim(opts))
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint %s: %w", cp.Generation, err)
	}
	base := remoteGeneration(p)
	defer base.Close()
	s.r.Keep(n)
	return drive(ctx, opts, runSpec{mode: modeAppend, base: base, from: cp.Position})
}

// commitCheckpoint stores the sealed generation gen as a checkpoint at pos and reopens it;
// the next generation is copied from it (the remote store keeps no graph of Kairos's).
func (s *remoteStore) commitCheckpoint(ctx context.Context, d *driver, gen int, man *Manifest, pos position, _ backend.VectorWriter) (*Generation, error) {
	cp := checkpoint{Generation: manifest.GenerationName(gen), Position: pos, Inputs: man.Inputs, Options: d.opts.Build, SkipBad: d.opts.SkipBad}
	if d.opts.Encoder != nil {
		id := d.opts.Encoder.Identity()
		h := d.opts.HNSW // what the options asked for: the store keeps no graph of Kairos's
		cp.Model, cp.HNSW = &id, &h
	}
	if err := s.r.SaveCheckpoint(ctx, gen, d.tmp, man, &cp); err != nil {
		return nil, fmt.Errorf("writing checkpoint: %w", err)
	}
	d.tmp = ""
	d.checkpoints++
	if err := d.opts.at("checkpoint-recorded"); err != nil {
		return nil, err
	}
	if err := s.Drop(ctx, d.prev, d.prev); err != nil { // drops the previous checkpoint
		d.opts.Logger.Warn("removing old checkpoints", "index", s.loc.String(), "err", err)
	}
	dim := 0
	if man.Dense != nil {
		dim = man.Dense.Model.Dim
	}
	p, err := s.r.OpenGen(ctx, gen, dim)
	if err != nil {
		return nil, fmt.Errorf("reopening checkpoint: %w", err)
	}
	return remoteGeneration(p), nil
}

// remoteGen is the source of a generation in a remote store: its opened parts, whose
// connection the Generation owns.
type remoteGen struct {
	p *genstore.Parts
}

var _ genSource = (*remoteGen)(nil)

func (r *remoteGen) docTable(ctx context.Context, g *Generation) (map[string]*doctable.Entry, error) {
	b, err := r.p.DocTable(ctx)
	if err != nil {
		return nil, err
	}
	t, err := doctable.Parse(b)
	if err != nil {
		return nil, &DamagedError{Path: g.Dir + " document table", What: err.Error()}
	}
	return t, nil
}

// docTableFile reads the table into memory.
func (r *remoteGen) docTableFile(ctx context.Context, g *Generation) (io.ReadSeeker, io.Closer, error) {
	b, err := r.p.DocTable(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := doctable.Format.Open(b); err != nil {
		return nil, nil, &DamagedError{Path: g.Dir + " document table", What: err.Error()}
	}
	return bytes.NewReader(b), io.NopCloser(nil), nil
}

// release closes the whole base: its connection; the writer copied its points.
func (r *remoteGen) release(g *Generation) { g.Close() }

func (r *remoteGen) close(*Generation) error { return r.p.Close() }
