package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// qdrantGens keeps generations on a Qdrant cluster: generation g is the collection
// NAME-g-00000g holding the passages, both vectors, the BM25 metadata and, as records, the
// manifest and the document table; the alias NAME names the live one. A generation is
// committed when its manifest record exists and the alias points at it, so the swap of the
// alias switches manifest and data at once. Nothing of it lives locally: the writer's
// directory is scratch space, removed after publishing.
type qdrantGens struct {
	e    *qdrant.Engine
	loc  Location
	log  *slog.Logger
	keep int // the checkpoint generation of the build, kept by clean (0: none)
}

var _ generations = (*qdrantGens)(nil)

func (g *qdrantGens) live(ctx context.Context) (int, error) {
	coll, err := g.e.Live(ctx)
	if err != nil || coll == "" {
		return 0, err
	}
	n, ok := parseGen(coll[len(g.e.Alias())+1:])
	if !ok {
		return 0, fmt.Errorf("%s: the alias %s names %s, not a generation of this index", g.loc, g.e.Alias(), coll)
	}
	return n, nil
}

func (g *qdrantGens) create(ctx context.Context) (int, string, error) {
	names, err := g.e.Generations(ctx)
	if err != nil {
		return 0, "", err
	}
	next := 1
	for _, name := range names {
		if n, ok := parseGen(name); ok && n >= next {
			next = n + 1
		}
	}
	dir, err := os.MkdirTemp("", "kairos-qdrant-"+genName(next)+"-*")
	return next, dir, err
}

func (g *qdrantGens) publish(ctx context.Context, gen int, dir string, man *Manifest) error {
	if err := g.store(ctx, gen, dir, man); err != nil {
		return err
	}
	if err := g.e.Promote(ctx, backend.Gen{Name: genName(gen)}); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		g.log.Warn("removing scratch directory", "dir", dir, "err", err)
	}
	return nil
}

// store writes the document table and then the manifest of generation gen, sealed in dir,
// as records of its collection.
func (g *qdrantGens) store(ctx context.Context, gen int, dir string, man *Manifest) error {
	bg := backend.Gen{Name: genName(gen)}
	docs, err := os.ReadFile(filepath.Join(dir, docTableName))
	if err != nil {
		return err
	}
	if err := g.e.WriteRecord(ctx, bg, recordDocTable, docs); err != nil {
		return fmt.Errorf("storing the document table: %w", err)
	}
	// The scratch directory's files are gone once published: the manifest lists the
	// records, with the sums verify checks them against. A deleted passage's point is
	// removed, not tombstoned, so every vector left belongs to a live passage.
	man.Files = map[string]FileSum{docTableName: sumOf(docs)}
	man.Tombstones = 0
	if man.Dense != nil {
		man.Dense.Vectors = man.Counts.Passages
	}
	sum, err := man.checksum()
	if err != nil {
		return err
	}
	man.Checksum = sum
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	if err := g.e.WriteRecord(ctx, bg, recordManifest, append(b, '\n')); err != nil {
		return fmt.Errorf("storing the manifest: %w", err)
	}
	return nil
}

func (g *qdrantGens) clean(ctx context.Context, live, prev int) error {
	names, err := g.e.Generations(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		if n, ok := parseGen(name); ok && n != live && n != prev && n != g.keep {
			errs = append(errs, g.e.Drop(ctx, backend.Gen{Name: name}))
		}
	}
	return errors.Join(errs...)
}

// discard drops the unpublished collection; the build's context may be over, so it gets
// its own bounded one.
func (g *qdrantGens) discard(gen int, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.e.Drop(ctx, backend.Gen{Name: genName(gen)}); err != nil {
		g.log.Warn("dropping unfinished generation", "index", g.loc.String(), "generation", gen, "err", err)
	}
	os.RemoveAll(dir)
}

func (g *qdrantGens) checkpoints() bool { return true }

func (g *qdrantGens) dropCheckpoint() error {
	g.keep = 0 // clean drops it
	return nil
}

// connectBuild connects to the cluster of loc for a build (or resumed build) of opts, whose
// collections take the encoder's dimension.
func connectBuild(ctx context.Context, opts *Options, loc Location) (*qdrant.Engine, error) {
	if opts.Build.Lexical != "" {
		return nil, fmt.Errorf("--lexical %s: an index on Qdrant keeps its BM25 in the cluster", opts.Build.Lexical)
	}
	return connectQdrant(ctx, loc.Qdrant, opts.Qdrant, buildDim(opts), opts.Logger)
}

// buildDim is the dense dimension of the collections a build of opts writes.
func buildDim(opts *Options) int {
	if opts.Encoder != nil {
		return opts.Encoder.Identity().Dim
	}
	return placeholderDim
}

// buildQdrant builds opts (validated) into the cluster of loc.
func buildQdrant(ctx context.Context, opts *Options, loc Location) (*Summary, error) {
	e, err := connectBuild(ctx, opts, loc)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	prepareQdrant(opts, e, loc)
	return drive(ctx, opts, runSpec{mode: modeAppend})
}

// prepareQdrant points the build options at the engine e on the cluster of loc.
func prepareQdrant(opts *Options, e *qdrant.Engine, loc Location) *qdrantGens {
	opts.Engines = Engines{Lexical: e.Lexical(), Vectors: e.Vectors()}
	opts.Build.Lexical = LexicalQdrant
	qb := opts.Qdrant.build(loc.Qdrant)
	opts.Build.Qdrant = &qb
	g := &qdrantGens{e: e, loc: loc, log: opts.Logger}
	opts.remote = g
	return g
}

// sumOf is the FileSum of b.
func sumOf(b []byte) FileSum {
	h := sha256Hex(b)
	return FileSum{Size: int64(len(b)), SHA256: h}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// deriveQdrant runs spec (an update or a delete) on top of the live generation of the index
// on the cluster of opts.Dir: the new collection starts as a copy of the live one's points.
func deriveQdrant(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	loc, err := ParseLocation(opts.Dir)
	if err != nil {
		return nil, err
	}
	base, err := openQdrant(ctx, loc, OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer base.Close()
	if err := opts.adoptBase(ctx, base.Manifest); err != nil {
		return nil, err
	}
	// The new collection is made like the live one: its shards, replication and BM25
	// parameters, unless the location asks for other shards or replication.
	qo := opts.Qdrant
	if qb := base.Manifest.Options.Qdrant; qb != nil {
		qo = QdrantOptions{Shards: qb.Shards, Replication: qb.Replication, BM25: backend.BM25Params{K1: qb.K1, B: qb.B}}
	}
	dim := placeholderDim
	if d := base.Manifest.Dense; d != nil {
		dim = d.Model.Dim
	}
	e, err := connectQdrant(ctx, loc.Qdrant, qo, dim, opts.Logger)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	qb := qo.build(loc.Qdrant)
	opts.Build.Qdrant = &qb
	opts.Engines = Engines{Lexical: e.Lexical(), Vectors: e.Vectors()}
	if err := opts.adoptLexical(base.Manifest); err != nil {
		return nil, err
	}
	opts.remote = &qdrantGens{e: e, loc: loc, log: opts.Logger}
	spec.base = base
	return drive(ctx, opts, spec)
}
