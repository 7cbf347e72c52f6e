package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// QdrantOptions configure the collections of an index on a Qdrant cluster. The location's
// own ?shards= and ?replication=, when given, take precedence over them.
type QdrantOptions struct {
	// Shards per collection; 0: qdrant.DefaultShards.
	Shards uint32
	// Replication factor; 0: 2 when the location names several hosts, else 1 (the engine's).
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
	fs.Var(countFlag{&o.Replication}, "qdrant-replication", "replication factor of each collection of a qdrant:// index; 0: 2 with several hosts, else 1 (the location's ?replication= wins)")
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

// Record slots of a generation's collection (qdrant.Engine.WriteRecord).
const (
	recordManifest = 0
	recordDocTable = 1
)

// placeholderDim is the dense vector size of the collections of an index without
// embeddings: the engine's collection layout always has a dense vector, never filled there.
const placeholderDim = 1

// connectQdrant connects to the cluster of q for vectors of dim.
func connectQdrant(ctx context.Context, q *QdrantLocation, o QdrantOptions, dim int, log *slog.Logger) (*qdrant.Engine, error) {
	b := o.build(q)
	return qdrant.New(ctx, qdrant.Options{Hosts: q.Hosts, Index: q.Name, Dim: dim, Shards: b.Shards, Replication: b.Replication,
		BM25: backend.BM25Params{K1: b.K1, B: b.B}, Logger: log})
}

// build settles the collection settings for q: the location's shards and replication, else
// the options', and the BM25 parameters (default BM25K1, BM25B).
func (o QdrantOptions) build(q *QdrantLocation) QdrantBuild {
	shards, repl := o.merge(q)
	if o.BM25 == (backend.BM25Params{}) {
		o.BM25 = backend.BM25Params{K1: BM25K1, B: BM25B}
	}
	return QdrantBuild{Shards: shards, Replication: repl, K1: o.BM25.K1, B: o.BM25.B}
}

// qdrantGens keeps generations on a Qdrant cluster: generation g is the collection
// NAME-g-00000g holding the passages, both vectors, the BM25 metadata and, as records, the
// manifest and the document table; the alias NAME names the live one. A generation is
// committed when its manifest record exists and the alias points at it, so the swap of the
// alias switches manifest and data at once. Nothing of it lives locally: the writer's
// directory is scratch space, removed after publishing.
type qdrantGens struct {
	e   *qdrant.Engine
	loc Location
	log *slog.Logger
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
	if err := g.e.Promote(ctx, bg); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		g.log.Warn("removing scratch directory", "dir", dir, "err", err)
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
		if n, ok := parseGen(name); ok && n != live && n != prev {
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

func (g *qdrantGens) checkpoints() bool { return false }

// buildQdrant builds opts (validated) into the cluster of loc.
func buildQdrant(ctx context.Context, opts *Options, loc Location) (*Summary, error) {
	if opts.Build.Lexical != "" {
		return nil, fmt.Errorf("--lexical %s: an index on Qdrant keeps its BM25 in the cluster", opts.Build.Lexical)
	}
	dim := placeholderDim
	if opts.Encoder != nil {
		dim = opts.Encoder.Identity().Dim
	}
	e, err := connectQdrant(ctx, loc.Qdrant, opts.Qdrant, dim, opts.Logger)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	opts.Engines = Engines{Lexical: e.Lexical(), Vectors: e.Vectors()}
	opts.Build.Lexical = LexicalQdrant
	qb := opts.Qdrant.build(loc.Qdrant)
	opts.Build.Qdrant = &qb
	opts.remote = &qdrantGens{e: e, loc: loc, log: opts.Logger}
	return drive(ctx, opts, runSpec{mode: modeAppend})
}

// LexicalQdrant is the lexical engine recorded in the manifest of an index on Qdrant.
const LexicalQdrant = "qdrant"

// sumOf is the FileSum of b.
func sumOf(b []byte) FileSum {
	h := sha256Hex(b)
	return FileSum{Size: int64(len(b)), SHA256: h}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// openQdrant opens the live generation of the index on the cluster of loc: the alias
// resolves to a collection, whose manifest record says what the generation holds.
func openQdrant(ctx context.Context, loc Location, o OpenOptions) (*Generation, error) {
	e, coll, man, err := liveQdrant(ctx, loc)
	if err != nil {
		return nil, err
	}
	g := backend.Gen{Name: genName(man.Generation)}
	where := loc.String() + " (collection " + coll + ")"
	fail := func(err error) (*Generation, error) {
		e.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var stats backend.CollectionStats
	if st := man.BM25; st != nil {
		stats = st.collection()
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
	return &Generation{Dir: where, Manifest: man, Passages: passages, Lexical: lex, Vectors: vecs, release: e.Close,
		remote: &remoteGen{e: e, coll: coll}}, nil
}

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
	b, err := e.ReadRecord(ctx, coll, recordManifest)
	if err != nil {
		return "", nil, &DamagedError{Path: loc.String() + " (collection " + coll + ")", What: "manifest: " + err.Error()}
	}
	man, err := parseManifest(b, loc.String()+" (collection "+coll+", manifest)")
	if err != nil {
		return "", nil, err
	}
	if want := e.Collection(genName(man.Generation)); want != coll {
		return "", nil, &DamagedError{Path: loc.String() + " (collection " + coll + ")", What: "its manifest describes generation " + genName(man.Generation)}
	}
	return coll, man, nil
}

// verifyQdrant checks the live generation of the index on the cluster of loc: the manifest
// record and its checksum, the document table record against the manifest's sum, that the
// table lists exactly the passages the collection holds, and the engine's checks (counts,
// BM25 metadata, every passage with its BM25 weights and, with embeddings, its dense vector).
func verifyQdrant(ctx context.Context, loc Location) (*VerifyReport, error) {
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
	g := backend.Gen{Name: genName(man.Generation)}
	counts, err := e.VerifyParts(ctx, g, man.Dense != nil)
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
	docs, err := e.ReadRecord(ctx, coll, recordDocTable)
	if err != nil {
		bad("document table", "%v", err)
		return rep, nil
	}
	if got, want := sumOf(docs), man.Files[docTableName]; got != want {
		bad("document table", "size %d sha256 %s, manifest says size %d sha256 %s", got.Size, got.SHA256, want.Size, want.SHA256)
		return rep, nil
	}
	table, err := parseDocTable(docs)
	if err != nil {
		bad("document table", "%v", err)
		return rep, nil
	}
	lex, err := e.Lexical().Open(ctx, g, backend.Scoring{}, nil)
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

// ErrUnsupported is wrapped by the error of an operation an index on Qdrant does not offer yet.
var ErrUnsupported = errors.New("not supported on a Qdrant index yet")

func errQdrantUnsupported(loc, what string) error {
	return fmt.Errorf("%s: %s: %w (rebuild with kairos index --force)", loc, what, ErrUnsupported)
}

// LiveManifest returns the manifest of the live generation of the index at loc (a directory
// or a qdrant:// location); the error wraps ErrNoIndex when there is none.
func LiveManifest(ctx context.Context, loc string) (*Manifest, error) {
	if !IsQdrant(loc) {
		gen, err := Current(loc)
		if err != nil {
			return nil, err
		}
		return ReadManifest(gen)
	}
	l, err := ParseLocation(loc)
	if err != nil {
		return nil, err
	}
	e, err := connectQdrant(ctx, l.Qdrant, QdrantOptions{}, placeholderDim, nil)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	_, man, err := readLiveManifest(ctx, e, l)
	return man, err
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
	if base.Manifest.Options.MaxWords != opts.Build.MaxWords {
		return nil, fmt.Errorf("%s was built with max words %d, not %d", opts.Dir, base.Manifest.Options.MaxWords, opts.Build.MaxWords)
	}
	if err := opts.adoptLanguage(base.Manifest); err != nil {
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
