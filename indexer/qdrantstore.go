package indexer

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// The Qdrant implementation of Store. What it keeps on the cluster and how (generation
// numbers, the records of the manifest, document table and checkpoint, dropping generations)
// is the engine's, indexer/backend/qdrant (generations.go), which reads and writes the
// records through indexer/manifest and indexer/doctable. This file is the adapter between
// that engine and what stays in indexer: the driver every build, update and resume runs,
// the Generation it opens and the VerifyReport it fills.

// qdrantStore keeps generations on a Qdrant cluster: generation g is the collection
// NAME-g-00000g holding the passages, both vectors, the BM25 metadata and, as records, the
// manifest and the document table; the alias NAME names the live one. A generation is
// committed when its manifest record exists and the alias points at it, so the swap of the
// alias switches manifest and data at once. Nothing of it lives locally: the writer's
// directory is scratch space, removed after publishing.
//
// The engine a writer uses is connected for the dimension of its vectors (prepare);
// the lifecycle methods called without one connect for records only (records carry no
// vector), and Close releases that connection.
type qdrantStore struct {
	e    *qdrant.Engine
	own  bool // e was connected by engine and is closed by Close
	loc  Location
	log  *slog.Logger
	keep int // the checkpoint generation of the build, kept by Drop (0: none)
}

var _ Store = (*qdrantStore)(nil)

func (g *qdrantStore) with(opts *Options) Store {
	c := *g
	c.log = opts.Logger
	return &c
}

func (g *qdrantStore) Location() Location { return g.loc }

// logger is the operation's logger; a store opened without options logs to slog's default.
func (g *qdrantStore) logger() *slog.Logger {
	if g.log == nil {
		return slog.Default()
	}
	return g.log
}

// engine is the connected engine: the writer's, else one connected for records.
func (g *qdrantStore) engine(ctx context.Context) (*qdrant.Engine, error) {
	if g.e != nil {
		return g.e, nil
	}
	e, err := connectQdrant(ctx, g.loc.Qdrant, QdrantOptions{}, placeholderDim, g.log)
	if err != nil {
		return nil, err
	}
	g.e, g.own = e, true
	return e, nil
}

// Close releases the connection engine made; a writer's engine is its writer's to close.
func (g *qdrantStore) Close() error {
	if !g.own || g.e == nil {
		return nil
	}
	e := g.e
	g.e, g.own = nil, false
	return e.Close()
}

func (g *qdrantStore) checkpointCopies() bool { return true }

func (g *qdrantStore) Live(ctx context.Context) (int, error) {
	if _, err := g.engine(ctx); err != nil {
		return 0, err
	}
	n, err := g.e.LiveGeneration(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", g.loc, err)
	}
	return n, nil
}

func (g *qdrantStore) Begin(ctx context.Context) (int, string, error) {
	if _, err := g.engine(ctx); err != nil {
		return 0, "", err
	}
	next, err := g.e.NextGeneration(ctx)
	if err != nil {
		return 0, "", err
	}
	dir, err := os.MkdirTemp("", "kairos-qdrant-"+manifest.GenerationName(next)+"-*")
	return next, dir, err
}

func (g *qdrantStore) Commit(ctx context.Context, gen int, dir string, man *Manifest) error {
	if _, err := g.engine(ctx); err != nil {
		return err
	}
	if err := g.store(ctx, gen, dir, man); err != nil {
		return err
	}
	if err := g.e.Promote(ctx, backend.Gen{Name: manifest.GenerationName(gen)}); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		g.logger().Warn("removing scratch directory", "dir", dir, "err", err)
	}
	return nil
}

// store writes the records of generation gen, sealed in dir: its document table, then its
// manifest (qdrant.Engine.WriteGeneration). The scratch directory's files are gone once
// published.
func (g *qdrantStore) store(ctx context.Context, gen int, dir string, man *Manifest) error {
	docs, err := os.ReadFile(filepath.Join(dir, doctable.FileName))
	if err != nil {
		return err
	}
	return g.e.WriteGeneration(ctx, gen, docs, man)
}

func (g *qdrantStore) Drop(ctx context.Context, live, prev int) error {
	if _, err := g.engine(ctx); err != nil {
		return err
	}
	return g.e.DropGenerations(ctx, func(n int) bool { return n == live || n == prev || n == g.keep })
}

// Discard drops the unpublished collection; the build's context may be over, so it gets
// its own bounded one.
func (g *qdrantStore) Discard(gen int, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := g.engine(ctx); err != nil {
		g.logger().Warn("dropping unfinished generation", "index", g.loc.String(), "generation", gen, "err", err)
	} else if err := g.e.Drop(ctx, backend.Gen{Name: manifest.GenerationName(gen)}); err != nil {
		g.logger().Warn("dropping unfinished generation", "index", g.loc.String(), "generation", gen, "err", err)
	}
	os.RemoveAll(dir)
}

func (g *qdrantStore) dropCheckpoint() error {
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

// build builds opts (validated) into the cluster.
func (g *qdrantStore) build(ctx context.Context, opts *Options) (*Summary, error) {
	if opts.Encoder != nil && opts.HNSW.CodesKind() == hnsw.CodesBinary {
		return nil, errors.New("--vectors binary: binary codes are the local HNSW graph's; an index on Qdrant keeps its vectors in Qdrant")
	}
	e, err := connectBuild(ctx, opts, g.loc)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	g.prepare(opts, e)
	return drive(ctx, opts, runSpec{mode: modeAppend})
}

// prepare points the build options at the engine e, connected for the build's collections,
// and at this store.
func (g *qdrantStore) prepare(opts *Options, e *qdrant.Engine) {
	opts.Engines = Engines{Passages: e.PassageStore(), Lexical: e.Lexical(), Vectors: e.Vectors()}
	opts.Build.Lexical = LexicalQdrant
	qb := opts.Qdrant.build(g.loc.Qdrant)
	opts.Build.Qdrant = &qb
	g.e, g.own = e, false
	opts.store = g
}

// derive runs spec (an update or a delete) on top of the live generation: the new
// collection starts as a copy of the live one's points.
func (g *qdrantStore) derive(ctx context.Context, opts *Options, spec runSpec) (*Summary, error) {
	loc := g.loc
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
	opts.Engines = Engines{Passages: e.PassageStore(), Lexical: e.Lexical(), Vectors: e.Vectors()}
	if err := opts.adoptLexical(base.Manifest); err != nil {
		return nil, err
	}
	g.e, g.own = e, false
	opts.store = g
	spec.base = base
	return drive(ctx, opts, spec)
}

// openQdrant opens the live generation of the index on the cluster of loc: the alias
// resolves to a collection, whose manifest record says what the generation holds.
func openQdrant(ctx context.Context, loc Location, o OpenOptions) (*Generation, error) {
	e, coll, man, err := liveQdrant(ctx, loc)
	if err != nil {
		return nil, err
	}
	return openQdrantParts(ctx, e, loc, coll, man, o)
}

// openQdrantGen opens generation gen (a checkpoint: committed, not live) of the index on
// the cluster of loc, whose vectors have dimension dim.
func openQdrantGen(ctx context.Context, loc Location, gen, dim int, o OpenOptions) (*Generation, error) {
	e, err := connectQdrant(ctx, loc.Qdrant, QdrantOptions{}, dim, nil)
	if err != nil {
		return nil, err
	}
	coll := e.Collection(manifest.GenerationName(gen))
	man, err := e.ReadManifest(ctx, coll)
	if err != nil {
		e.Close()
		return nil, err
	}
	return openQdrantParts(ctx, e, loc, coll, man, o)
}

// openQdrantParts opens the passages, BM25 and vectors of collection coll, described by man;
// the Generation owns e, which is closed on failure.
func openQdrantParts(ctx context.Context, e *qdrant.Engine, loc Location, coll string, man *Manifest, o OpenOptions) (*Generation, error) {
	g := backend.Gen{Name: manifest.GenerationName(man.Generation)}
	where := loc.String() + " (collection " + coll + ")"
	fail := func(err error) (*Generation, error) {
		e.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var stats backend.CollectionStats
	if st := man.BM25; st != nil {
		stats = st.Collection()
	}
	passages, err := e.OpenPassages(ctx, g)
	if err != nil {
		return fail(err)
	}
	if passages.Live() != man.Counts.Passages {
		return fail(&DamagedError{Path: where, What: fmt.Sprintf("%d passages, the manifest says %d", passages.Live(), man.Counts.Passages)})
	}
	lex, err := e.Lexical().Open(ctx, g, backend.Scoring{Params: o.BM25, Stats: stats}, passages)
	if err != nil {
		return fail(err)
	}
	var vecs backend.VectorReader
	if !o.SkipVectors && man.Dense != nil {
		if vecs, err = e.Vectors().Open(ctx, g, passages); err != nil {
			return fail(err)
		}
		if vecs.Len() != man.Dense.Vectors {
			return fail(&DamagedError{Path: where, What: fmt.Sprintf("%d dense vectors, the manifest says %d", vecs.Len(), man.Dense.Vectors)})
		}
	}
	return &Generation{Dir: where, Manifest: man, Passages: passages, Lexical: lex, Vectors: vecs, src: &remoteGen{e: e, coll: coll}}, nil
}

// remoteGen is the source of a generation on a Qdrant cluster: the engine connected to it
// (owned by the Generation, closed with it) and its collection.
type remoteGen struct {
	e    *qdrant.Engine
	coll string
}

var _ genSource = (*remoteGen)(nil)

// docTableRecord reads the document table record, checked against the manifest's sum.
func (r *remoteGen) docTableRecord(ctx context.Context, g *Generation) ([]byte, error) {
	return r.e.ReadDocTable(ctx, r.coll, g.Manifest)
}

func (r *remoteGen) docTable(ctx context.Context, g *Generation) (map[string]*doctable.Entry, error) {
	b, err := r.docTableRecord(ctx, g)
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
	b, err := r.docTableRecord(ctx, g)
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

func (r *remoteGen) close(*Generation) error { return r.e.Close() }

// liveQdrant connects to the cluster of loc and reads the manifest of the live generation,
// reconnecting for the dimension of its vectors.
func liveQdrant(ctx context.Context, loc Location) (*qdrant.Engine, string, *Manifest, error) {
	e, err := connectQdrant(ctx, loc.Qdrant, QdrantOptions{}, placeholderDim, nil)
	if err != nil {
		return nil, "", nil, err
	}
	coll, man, err := readLiveManifest(ctx, e, loc)
	if err == nil && man.Dense != nil && man.Dense.Model.Dim != placeholderDim {
		e.Close()
		if e, err = connectQdrant(ctx, loc.Qdrant, QdrantOptions{}, man.Dense.Model.Dim, nil); err != nil {
			return nil, "", nil, err
		}
	}
	if err != nil {
		e.Close()
		return nil, "", nil, err
	}
	return e, coll, man, nil
}

func readLiveManifest(ctx context.Context, e *qdrant.Engine, loc Location) (string, *Manifest, error) {
	coll, err := e.Live(ctx)
	if err != nil {
		return "", nil, err
	}
	if coll == "" {
		return "", nil, fmt.Errorf("%s: %w", loc, ErrNoIndex)
	}
	man, err := e.ReadManifest(ctx, coll)
	return coll, man, err
}

// Manifest reads the manifest record of the live generation.
func (g *qdrantStore) Manifest(ctx context.Context) (*Manifest, error) {
	e, err := connectQdrant(ctx, g.loc.Qdrant, QdrantOptions{}, placeholderDim, nil)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	_, man, err := readLiveManifest(ctx, e, g.loc)
	return man, err
}

// Open opens the live generation: the alias resolves to a collection, whose manifest record
// says what the generation holds. o.Level, Engines and Trusted do not apply.
func (g *qdrantStore) Open(ctx context.Context, o OpenOptions) (*Generation, error) {
	return openQdrant(ctx, g.loc, o)
}

// PendingCheckpoint describes the newest checkpoint above the live generation.
func (g *qdrantStore) PendingCheckpoint(ctx context.Context) (*CheckpointInfo, error) {
	cp, err := g.pending(ctx)
	if err != nil || cp == nil {
		return nil, err
	}
	man, err := g.e.ReadManifest(ctx, g.e.Collection(cp.Generation))
	if err != nil {
		return nil, err
	}
	return checkpointInfo(cp, man), nil
}

// checkpointDir: a checkpoint on Qdrant is a collection, not a directory.
func (g *qdrantStore) checkpointDir() (string, error) { return "", nil }

// compact: updates on Qdrant delete points rather than tombstone them, so there is nothing to
// drop, and the live generation is reported as it is.
func (g *qdrantStore) compact(ctx context.Context, opts *Options) (*Summary, error) {
	start := time.Now()
	man, err := g.Manifest(ctx)
	if err != nil {
		return nil, err
	}
	return &Summary{Dir: opts.Dir, Generation: man.Generation, Counts: man.Counts, Dense: man.Dense, Elapsed: time.Since(start)}, nil
}

// Checkpoints on Qdrant. A checkpoint is a complete generation (its points, BM25 metadata,
// document table and manifest records) that the alias does not name, with a third record: the
// checkpoint itself (inputs with their sha256, options, how far the build had read), written
// last. The build goes on in a new collection copied from it. After a crash, Resume finds the
// newest collection above the live one that holds a checkpoint record and continues from it;
// collections without one (an unfinished writer's) are dropped by the next commit.

// saveCheckpoint stores generation gen, sealed in dir, as a checkpoint: its records, then cp.
func (g *qdrantStore) saveCheckpoint(ctx context.Context, gen int, dir string, man *Manifest, cp *checkpoint) error {
	if err := g.store(ctx, gen, dir, man); err != nil {
		return err
	}
	if err := g.e.WriteCheckpoint(ctx, gen, cp); err != nil {
		return err
	}
	g.keep = gen
	if err := os.RemoveAll(dir); err != nil {
		g.logger().Warn("removing scratch directory", "dir", dir, "err", err)
	}
	return nil
}

// pending returns the newest checkpoint above the live generation, nil when there is none.
func (g *qdrantStore) pending(ctx context.Context) (*checkpoint, error) {
	live, err := g.Live(ctx)
	if err != nil {
		return nil, err
	}
	return g.e.PendingCheckpoint(ctx, live)
}

// commitCheckpoint stores the sealed generation gen as a checkpoint at pos and reopens it;
// the next collection is copied from its points (vec: the collection has no graph to keep).
func (g *qdrantStore) commitCheckpoint(ctx context.Context, d *driver, gen int, man *Manifest, pos position, _ backend.VectorWriter) (*Generation, error) {
	cp := checkpoint{Generation: manifest.GenerationName(gen), Position: pos, Inputs: man.Inputs, Options: d.opts.Build, SkipBad: d.opts.SkipBad}
	if d.opts.Encoder != nil {
		id := d.opts.Encoder.Identity()
		h := d.opts.HNSW // the collection has no graph of Kairos's: the options asked for
		cp.Model, cp.HNSW = &id, &h
	}
	if err := g.saveCheckpoint(ctx, gen, d.tmp, man, &cp); err != nil {
		return nil, fmt.Errorf("writing checkpoint: %w", err)
	}
	d.tmp = ""
	d.checkpoints++
	if err := d.opts.at("checkpoint-recorded"); err != nil {
		return nil, err
	}
	if err := g.Drop(ctx, d.prev, d.prev); err != nil { // drops the previous checkpoint
		d.opts.Logger.Warn("removing old checkpoints", "index", g.loc.String(), "err", err)
	}
	base, err := openQdrantGen(ctx, g.loc, gen, denseDim(man), OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("reopening checkpoint: %w", err)
	}
	return base, nil
}

// denseDim is the dimension of the collections of the index man describes.
func denseDim(man *Manifest) int {
	if man.Dense != nil {
		return man.Dense.Model.Dim
	}
	return placeholderDim
}

// resume continues the build whose checkpoint is on the cluster, or builds from scratch
// when there is none. opts are validated.
func (g *qdrantStore) resume(ctx context.Context, opts *Options) (*Summary, error) {
	loc := g.loc
	e, err := connectBuild(ctx, opts, loc)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	g.prepare(opts, e)
	cp, err := g.pending(ctx)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		opts.Logger.Info("no checkpoint: building from scratch", "index", loc.String())
		sum, err := drive(ctx, opts, runSpec{mode: modeAppend})
		if sum != nil {
			sum.NoCheckpoint = true
		}
		return sum, err
	}
	if err := checkpointMatches(cp, opts); err != nil {
		return nil, fmt.Errorf("cannot resume the build in %s: %w", loc, err)
	}
	n, _ := manifest.ParseGeneration(cp.Generation)
	base, err := openQdrantGen(ctx, loc, n, buildDim(opts), OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint %s: %w", cp.Generation, err)
	}
	defer base.Close()
	g.keep = n
	return drive(ctx, opts, runSpec{mode: modeAppend, base: base, from: cp.Position})
}

// Verify checks the live generation of the index on the cluster: the manifest
// record and its checksum, the document table record against the manifest's sum, that the
// table lists exactly the passages the collection holds, and the engine's checks (counts,
// BM25 metadata, every passage with its BM25 weights and, with embeddings, its dense vector).
func (g *qdrantStore) Verify(ctx context.Context) (*VerifyReport, error) {
	loc := g.loc
	e, coll, man, err := liveQdrant(ctx, loc)
	if err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			return &VerifyReport{Generation: loc.String(), Problems: []Problem{{Path: de.Path, What: de.What}}}, nil
		}
		return nil, err
	}
	defer e.Close()
	where := loc.String() + " (collection " + coll + ")"
	rep := &VerifyReport{Generation: where}
	bad := func(what string, format string, a ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: where + " " + what, What: fmt.Sprintf(format, a...)})
	}
	bg := backend.Gen{Name: manifest.GenerationName(man.Generation)}
	counts, err := e.VerifyParts(ctx, bg, man.Dense != nil)
	rep.Passages = counts.Passages
	if err != nil {
		bad("points", "%v", err)
	}
	if counts.Passages != man.Counts.Passages {
		bad("points", "%d passages, the manifest says %d", counts.Passages, man.Counts.Passages)
	}
	if man.Dense != nil && counts.Dense != man.Dense.Vectors {
		bad("points", "%d dense vectors, the manifest says %d", counts.Dense, man.Dense.Vectors)
	}
	rep.Files++
	docs, err := e.ReadDocTable(ctx, coll, man)
	if err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			err = errors.New(de.What)
		}
		bad("document table", "%v", err)
		return rep, nil
	}
	table, err := doctable.Parse(docs)
	if err != nil {
		bad("document table", "%v", err)
		return rep, nil
	}
	lex, err := e.Lexical().Open(ctx, bg, backend.Scoring{}, nil)
	if err != nil {
		bad("BM25", "opening: %v", err)
		return rep, nil
	}
	defer lex.Close()
	var keys []uint32
	for _, d := range table {
		keys = append(keys, d.Keys...)
	}
	if len(keys) != counts.Passages {
		bad("document table", "lists %d passages, the collection holds %d", len(keys), counts.Passages)
	}
	const chunk = 1000
	missing := 0
	for lo := 0; lo < len(keys); lo += chunk {
		has, err := lex.Has(ctx, keys[lo:min(lo+chunk, len(keys))])
		if err != nil {
			return nil, err
		}
		for _, ok := range has {
			if !ok {
				missing++
			}
		}
	}
	if missing > 0 {
		bad("document table", "%d of its passages are missing from the collection", missing)
	}
	return rep, nil
}

// QdrantOptions configure the collections of an index on a Qdrant cluster. The location's
// own ?shards= and ?replication=, when given, take precedence over them.
type QdrantOptions struct {
	// Shards per collection; 0: qdrant.DefaultShards.
	Shards uint32
	// Replication factor; 0: the engine's, min(the cluster's peers, 2) (qdrant.Options).
	Replication uint32
	// BM25 are the k1 and b baked into the weights at build; searches must use the same.
	// Zero: BM25K1 and BM25B, the searches' defaults.
	BM25 backend.BM25Params
}

// Flags registers --qdrant-shards (default qdrant.DefaultShards) and --qdrant-replication
// (default 0: the engine's choice).
func (o *QdrantOptions) Flags(fs *flag.FlagSet) {
	if o.Shards == 0 {
		o.Shards = qdrant.DefaultShards
	}
	fs.Var(countFlag{&o.Shards}, "qdrant-shards", "shards of each collection of a qdrant:// index (the location's ?shards= wins)")
	fs.Var(countFlag{&o.Replication}, "qdrant-replication", "replication factor of each collection of a qdrant:// index; 0: the cluster's peers, at most 2 (the location's ?replication= wins)")
}

// countFlag is a uint32 flag that takes 1..maxQdrantCount.
type countFlag struct{ p *uint32 }

func (f countFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(*f.p), 10)
}

func (f countFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || n > maxQdrantCount {
		return fmt.Errorf("want an integer in 1..%d", maxQdrantCount)
	}
	*f.p = uint32(n)
	return nil
}

// merge settles the shards and replication of q: the location's, else the options'.
func (o QdrantOptions) merge(q *QdrantLocation) (shards, replication uint32) {
	shards, replication = o.Shards, o.Replication
	if q.Shards != 0 {
		shards = q.Shards
	}
	if q.Replication != 0 {
		replication = q.Replication
	}
	return shards, replication
}

// placeholderDim is the dense vector size of the collections of an index without
// embeddings: the engine's collection layout always has a dense vector, never filled there.
const placeholderDim = 1

// connectQdrant connects to the cluster of q for vectors of dim.
func connectQdrant(ctx context.Context, q *QdrantLocation, o QdrantOptions, dim int, log *slog.Logger) (*qdrant.Engine, error) {
	b := o.build(q)
	return qdrant.New(ctx, qdrant.Options{Hosts: q.Hosts, REST: q.REST, Index: q.Name, Dim: dim, Shards: b.Shards, Replication: b.Replication,
		BM25: backend.BM25Params{K1: b.K1, B: b.B}, Logger: log})
}

// build settles the collection settings for q: the location's shards and replication, else
// the options', and the BM25 parameters (default BM25K1, BM25B).
func (o QdrantOptions) build(q *QdrantLocation) QdrantBuild {
	shards, repl := o.merge(q)
	if o.BM25 == (backend.BM25Params{}) {
		o.BM25 = backend.DefaultBM25()
	}
	return QdrantBuild{Shards: shards, Replication: repl, K1: o.BM25.K1, B: o.BM25.B}
}
