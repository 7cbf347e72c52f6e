package indexer

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// dirStore keeps the generations of an index in a local directory (generation.go describes
// the layout; checkpoint.go the CHECKPOINT record). Every writer holds the directory's lock.
type dirStore struct {
	dir string
	at  func(string) error // Options.at; nil: no fault injection
}

var _ Store = dirStore{}

func (s dirStore) Location() Location { return Location{Dir: s.dir} }

func (s dirStore) Live(context.Context) (int, error) { return liveGen(s.dir), nil }

func (s dirStore) Begin(context.Context) (int, string, error) {
	gen, err := nextGen(s.dir)
	if err != nil {
		return 0, "", err
	}
	tmp := filepath.Join(s.dir, manifest.GenerationName(gen)+tmpSuffix)
	if err := os.RemoveAll(tmp); err != nil {
		return 0, "", err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return 0, "", err
	}
	return gen, tmp, nil
}

func (s dirStore) Commit(_ context.Context, gen int, dir string, _ *Manifest) error {
	return commitGen(s.dir, dir, gen, s.hook())
}

// hook is the fault hook, never nil.
func (s dirStore) hook() func(string) error {
	if s.at == nil {
		return func(string) error { return nil }
	}
	return s.at
}

func (s dirStore) Drop(_ context.Context, live, prev int) error { return cleanOld(s.dir, live, prev) }

func (s dirStore) Discard(_ int, dir string) { os.RemoveAll(dir) }

func (s dirStore) Close() error { return nil }

func (s dirStore) checkpointDir() (string, error) {
	c, err := manifest.ReadCheckpoint(s.dir)
	if err != nil || c == nil {
		return "", err
	}
	return filepath.Join(s.dir, c.Generation), nil
}

func (s dirStore) dropCheckpoint() error { return manifest.RemoveCheckpoint(s.dir) }

// checkpointCopies: a local checkpoint shares the store segments and bleve files by link;
// only a graph is written again (the driver accounts for it).
func (s dirStore) checkpointCopies() bool { return false }

func (s dirStore) Manifest(context.Context) (*Manifest, error) {
	gen, err := Current(s.dir)
	if err != nil {
		return nil, err
	}
	return ReadManifest(gen)
}

func (s dirStore) Open(ctx context.Context, o OpenOptions) (*Generation, error) {
	gen, err := Current(s.dir)
	if err != nil {
		return nil, err
	}
	return openGen(ctx, gen, o)
}

func (s dirStore) Verify(ctx context.Context) (*VerifyReport, error) {
	gen, err := Current(s.dir)
	if err != nil {
		return nil, err
	}
	return VerifyGeneration(ctx, gen)
}

func (s dirStore) PendingCheckpoint(context.Context) (*CheckpointInfo, error) {
	c, err := manifest.ReadCheckpoint(s.dir)
	if err != nil || c == nil {
		return nil, err
	}
	man, err := ReadManifest(filepath.Join(s.dir, c.Generation))
	if err != nil {
		return nil, err
	}
	return checkpointInfo(c, man), nil
}

func (s dirStore) build(ctx context.Context, opts *Options) (*Summary, error) {
	unlock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return buildLocked(ctx, opts)
}

func (s dirStore) resume(ctx context.Context, opts *Options) (*Summary, error) {
	unlock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cp, err := manifest.ReadCheckpoint(opts.Dir)
	if err != nil {
		return nil, err
	}
	if cp == nil && opts.lexicalFirst() {
		if sum, err := resumeAddVectors(ctx, opts); sum != nil || err != nil {
			return sum, err
		}
	}
	if cp == nil {
		opts.Logger.Info("no checkpoint: building from scratch", "dir", opts.Dir)
		sum, err := buildLocked(ctx, opts)
		if sum != nil {
			sum.NoCheckpoint = true
		}
		return sum, err
	}
	if opts.Build.Lexical == "" {
		// Naming no engine resumes in the checkpoint's ("" there: bleve, from an older build).
		if err := opts.useLexical(cp.Options.Lexical); err != nil {
			return nil, err
		}
	}
	// A LexicalFirst build checkpoints its BM25 half, without the encoder.
	first := opts.lexicalFirst() && cp.Model == nil
	match := *opts
	if first {
		match.Encoder = nil
	}
	if err := checkpointMatches(cp, &match); err != nil {
		return nil, fmt.Errorf("cannot resume the build in %s: %w", opts.Dir, err)
	}
	if cp.Embedding != nil {
		return resumeEmbedding(ctx, opts, cp)
	}
	base, err := OpenGeneration(filepath.Join(opts.Dir, cp.Generation))
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint %s: %w", cp.Generation, err)
	}
	defer base.Close()
	spec := runSpec{mode: modeAppend, base: base, from: cp.Position}
	if first {
		return buildLexicalFirst(ctx, opts, spec)
	}
	return drive(ctx, opts, spec)
}

func (s dirStore) derive(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	if _, err := Current(opts.Dir); err != nil {
		return nil, err // before lockDir, which would create a missing directory
	}
	unlock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	base, err := Open(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	if err := opts.adoptBase(ctx, base.Manifest); err != nil {
		return nil, err
	}
	if err := opts.adoptLexical(base.Manifest); err != nil {
		return nil, err
	}
	spec.base = base
	return drive(ctx, opts, spec)
}

func (s dirStore) compact(ctx context.Context, opts *Options) (*Summary, error) {
	start, dir := time.Now(), opts.Dir
	if _, err := Current(dir); err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	gen, err := Current(dir) // again, under the lock
	if err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	man, err := compactGen(ctx, opts, gen, liveGen(dir))
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: dir, Generation: man.Generation, Counts: man.Counts, Dense: man.Dense,
		Elapsed: time.Since(start), Compacted: true}, nil
}

// commitCheckpoint renames the sealed generation into place, records it in CHECKPOINT and
// reopens it; the graph just committed (vec) goes on in memory rather than being loaded again.
func (s dirStore) commitCheckpoint(ctx context.Context, d *driver, gen int, man *Manifest, pos position, vec backend.VectorWriter) (*Generation, error) {
	final := filepath.Join(s.dir, manifest.GenerationName(gen))
	if err := os.Rename(d.tmp, final); err != nil {
		return nil, err
	}
	d.tmp = ""
	if err := atomicfile.SyncDir(s.dir); err != nil {
		return nil, err
	}
	if err := d.opts.at("checkpoint-renamed"); err != nil {
		return nil, err
	}
	cp := checkpoint{Generation: manifest.GenerationName(gen), Position: pos, Inputs: man.Inputs, Options: d.opts.Build, SkipBad: d.opts.SkipBad}
	if d.opts.Encoder != nil {
		id := d.opts.Encoder.Identity()
		cp.Model = &id
		cp.HNSW = &man.Dense.HNSW
	}
	if err := manifest.WriteCheckpoint(s.dir, &cp); err != nil {
		return nil, fmt.Errorf("writing checkpoint: %w", err)
	}
	d.checkpoints++
	if err := d.opts.at("checkpoint-recorded"); err != nil {
		return nil, err
	}
	if err := cleanOld(s.dir, d.prev, d.prev); err != nil { // drops the previous checkpoint
		d.opts.Logger.Warn("removing old checkpoints", "dir", s.dir, "err", err)
	}
	if err := d.opts.at("checkpoint-cleaned"); err != nil {
		return nil, err
	}
	base, err := openGen(ctx, final, OpenOptions{SkipVectors: true, Trusted: true})
	if err != nil {
		return nil, fmt.Errorf("reopening checkpoint: %w", err)
	}
	base.Lexical.Close() // the writer copies the engine's files; it never reads the base's index
	if vec != nil {
		if r, ok := vec.(backend.Reopener); ok {
			base.Vectors = r.Reopen(base.store)
		} else if base.Vectors, err = openVectors(ctx, d.opts.Engines.Vectors, backend.Gen{Name: manifest.GenerationName(gen), Dir: final}, man, base.store); err != nil {
			base.store.Close()
			return nil, fmt.Errorf("reopening checkpoint: %w", err)
		}
	}
	return base, nil
}

// dirGen is the source of a generation in a local directory: its files.
type dirGen struct{}

var _ genSource = dirGen{}

func (dirGen) docTable(_ context.Context, g *Generation) (map[string]*doctable.Entry, error) {
	return doctable.Read(filepath.Join(g.Dir, doctable.FileName))
}

// docTableFile holds the local file open.
func (dirGen) docTableFile(_ context.Context, g *Generation) (io.ReadSeeker, io.Closer, error) {
	f, err := os.Open(filepath.Join(g.Dir, doctable.FileName))
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// release closes the passage store: the lexical part was closed at once, the vectors taken
// over by the writer. Its mapping would otherwise keep the files, and their file system, busy.
func (dirGen) release(g *Generation) { g.store.Close() }

func (dirGen) close(g *Generation) error { return g.store.Close() }
