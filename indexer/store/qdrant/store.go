// Package qdrant keeps the generations of an index on a Qdrant cluster (store.Store):
// generation g is the collection NAME-g-00000g holding the passages, both vectors, the BM25
// metadata and, as records, the manifest and the document table (and, for the checkpoint of
// a build in progress, the checkpoint); the alias NAME names the live one. A generation is
// committed when its manifest record exists and the alias points at it, so the swap of the
// alias switches manifest and data at once. Nothing of it lives locally: a writer's directory
// is scratch space, removed once published. The engines and the records are
// indexer/backend/qdrant's; this package numbers, publishes and drops generations with them.
package qdrant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/backend"
	qe "github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Store is the store of the index at one location on a cluster. The lifecycle calls connect
// for records only (records carry no vector), through the writer's engine while one is
// connected (Engines); Close releases the connection the store made for its own calls.
type Store struct {
	loc *qe.Location
	log *slog.Logger
	e   *qe.Engine
	own bool // e was connected by engine and is closed by Close
}

var _ store.Store = (*Store)(nil)

// New returns the store of the index at loc, logging to log (nil: nowhere). It connects to
// nothing yet: each operation connects as it needs (the dimension of a collection is known
// only from a manifest or an encoder).
func New(loc *qe.Location, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{loc: loc, log: log}
}

// String is the location of the index.
func (s *Store) String() string { return s.loc.String() }

// placeholderDim is the dense vector size of the collections of an index without
// embeddings: the engine's collection layout always has a dense vector, never filled there.
const placeholderDim = 1

// connect connects to the cluster for vectors of dim, with collections made as o says (the
// location's settings win).
func (s *Store) connect(ctx context.Context, o store.CollectionOptions, dim int) (*qe.Engine, manifest.QdrantBuild, error) {
	return s.connectLogging(ctx, o, dim, s.log)
}

// connectLogging is connect with the engine's retries and progress logged to log.
func (s *Store) connectLogging(ctx context.Context, o store.CollectionOptions, dim int, log *slog.Logger) (*qe.Engine, manifest.QdrantBuild, error) {
	b := s.build(o)
	e, err := qe.New(ctx, qe.Options{Hosts: s.loc.Hosts, REST: s.loc.REST, Index: s.loc.Name, Dim: dim, Shards: b.Shards, Replication: b.Replication,
		BM25: backend.BM25Params{K1: b.K1, B: b.B}, Logger: log})
	return e, b, err
}

// build settles the collection settings: the location's shards and replication, else o's,
// and the BM25 parameters (default backend.DefaultBM25). The manifest records them.
func (s *Store) build(o store.CollectionOptions) manifest.QdrantBuild {
	shards, repl := o.Shards, o.Replication
	if s.loc.Shards != 0 {
		shards = s.loc.Shards
	}
	if s.loc.Replication != 0 {
		repl = s.loc.Replication
	}
	bm25 := o.BM25
	if bm25 == (backend.BM25Params{}) {
		bm25 = backend.DefaultBM25()
	}
	return manifest.QdrantBuild{Shards: shards, Replication: repl, K1: bm25.K1, B: bm25.B}
}

// engine is the connected engine: the writer's, else one connected for records.
func (s *Store) engine(ctx context.Context) (*qe.Engine, error) {
	if s.e != nil {
		return s.e, nil
	}
	e, _, err := s.connect(ctx, store.CollectionOptions{}, placeholderDim)
	if err != nil {
		return nil, err
	}
	s.e, s.own = e, true
	return e, nil
}

// Close releases the connection the store made for its own calls; a writer's engines are
// their writer's to close (Connected.Close), and opened Parts close their own.
func (s *Store) Close() error {
	if !s.own || s.e == nil {
		return nil
	}
	e := s.e
	s.e, s.own = nil, false
	return e.Close()
}

// Lock has no lock to take: a cluster holds no writer lock, and concurrent writers of one
// index are the user's concern (as on a system without flock).
func (s *Store) Lock(context.Context) (func(), error) { return func() {}, nil }

// Live is the number of the generation the alias names, 0 when there is none.
func (s *Store) Live(ctx context.Context) (int, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return 0, err
	}
	n, err := e.LiveGeneration(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s, err)
	}
	return n, nil
}

// Engines connects the engines of a writer: for a new index, collections made as
// spec.Collections says; for one derived from spec.Base, like the base's (shards,
// replication, BM25 parameters), unless the location asks for other shards or replication.
// Its vectors have spec.Dim dimensions, else the base's. What only a local index does is
// refused before connecting: a local lexical engine, binary codes of the local graph. The
// store's own calls go through the engines until they are closed.
func (s *Store) Engines(ctx context.Context, spec store.EngineSpec) (*store.Connected, error) {
	if spec.HNSW.Codes != "" && spec.HNSW.CodesKind() == hnsw.CodesBinary {
		return nil, errors.New("--vectors binary: binary codes are the local HNSW graph's; an index on Qdrant keeps its vectors in Qdrant")
	}
	if spec.VectorIndex == manifest.VectorIndexIVF {
		return nil, errors.New("--vector-index ivf: the inverted file is a local index's; an index on Qdrant keeps its vectors in Qdrant")
	}
	if spec.Lexical != "" && spec.Lexical != manifest.LexicalQdrant {
		return nil, fmt.Errorf("--lexical %s: an index on Qdrant keeps its BM25 in the cluster", spec.Lexical)
	}
	o, dim := spec.Collections, spec.Dim
	if b := spec.Base; b != nil {
		if qb := b.Options.Qdrant; qb != nil {
			o = store.CollectionOptions{Shards: qb.Shards, Replication: qb.Replication, BM25: backend.BM25Params{K1: qb.K1, B: qb.B}}
		}
		if dim == 0 && b.Dense != nil {
			dim = b.Dense.Model.Dim
		}
	}
	if dim == 0 {
		dim = placeholderDim
	}
	log := spec.Logger
	if log == nil {
		log = s.log
	}
	e, b, err := s.connectLogging(ctx, o, dim, log)
	if err != nil {
		return nil, err
	}
	if s.own && s.e != nil {
		s.e.Close()
	}
	s.e, s.own = e, false
	c := &store.Connected{
		Engines:     store.Engines{Passages: e.PassageStore(), Lexical: e.Lexical(), Vectors: e.Vectors()},
		LexicalName: manifest.LexicalQdrant, Qdrant: &b, CheckpointCopies: true,
		Release: func() error {
			if s.e == e {
				s.e = nil
			}
			return e.Close()
		},
	}
	if o := spec.Override; o.Passages != nil {
		c.Passages = o.Passages
	}
	if o := spec.Override; o.Lexical != nil {
		c.Lexical = o.Lexical
	}
	if o := spec.Override; o.Vectors != nil {
		c.Vectors = o.Vectors
	}
	return c, nil
}

// Begin numbers a new generation (one past the highest that has a collection) and makes the
// local scratch directory its writer fills.
func (s *Store) Begin(ctx context.Context) (store.Writing, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return store.Writing{}, err
	}
	next, err := e.NextGeneration(ctx)
	if err != nil {
		return store.Writing{}, err
	}
	dir, err := os.MkdirTemp("", "kairos-qdrant-"+manifest.GenerationName(next)+"-*")
	return store.Writing{Gen: next, Dir: dir}, err
}

// Commit publishes generation w, sealed in w.Dir: its records (the document table, then the
// manifest), then the alias, or, for a checkpoint, its checkpoint record instead.
func (s *Store) Commit(ctx context.Context, w store.Writing, man *manifest.Manifest, o store.CommitOptions) error {
	e, err := s.engine(ctx)
	if err != nil {
		return err
	}
	docs, err := os.ReadFile(filepath.Join(w.Dir, doctable.FileName))
	if err != nil {
		return err
	}
	if err := e.WriteGeneration(ctx, w.Gen, docs, man); err != nil {
		return err
	}
	if o.Checkpoint != nil {
		err = e.WriteCheckpoint(ctx, w.Gen, o.Checkpoint)
	} else {
		err = e.Promote(ctx, backend.Gen{Name: manifest.GenerationName(w.Gen)})
	}
	if err != nil {
		return err
	}
	if err := os.RemoveAll(w.Dir); err != nil {
		s.log.Warn("removing scratch directory", "dir", w.Dir, "err", err)
	}
	return nil
}

// Discard drops the unpublished collection of w and its scratch directory.
func (s *Store) Discard(ctx context.Context, w store.Writing) error {
	e, err := s.engine(ctx)
	if err == nil {
		err = e.Drop(ctx, backend.Gen{Name: manifest.GenerationName(w.Gen)})
	}
	return errors.Join(err, os.RemoveAll(w.Dir))
}

// Drop drops the collection of every generation other than keep and the pending checkpoint.
func (s *Store) Drop(ctx context.Context, keep ...int) error {
	e, err := s.engine(ctx)
	if err != nil {
		return err
	}
	kept := map[int]bool{}
	for _, n := range keep {
		kept[n] = true
	}
	cp, err := s.Checkpoint(ctx)
	if err != nil {
		return err
	}
	if cp != nil {
		n, _ := manifest.ParseGeneration(cp.Generation)
		kept[n] = true
	}
	return e.DropGenerations(ctx, func(n int) bool { return kept[n] })
}

// Manifest reads the manifest record of generation gen, or of the live one (gen 0); the error
// wraps manifest.ErrNoIndex when there is none.
func (s *Store) Manifest(ctx context.Context, gen int) (*manifest.Manifest, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return nil, err
	}
	coll, err := s.collection(ctx, e, gen)
	if err != nil {
		return nil, err
	}
	return e.ReadManifest(ctx, coll)
}

// collection is the collection of generation gen, or the one the alias names (gen 0).
func (s *Store) collection(ctx context.Context, e *qe.Engine, gen int) (string, error) {
	if gen != 0 {
		return e.Collection(manifest.GenerationName(gen)), nil
	}
	coll, err := e.Live(ctx)
	if err != nil {
		return "", err
	}
	if coll == "" {
		return "", fmt.Errorf("%s: %w", s, manifest.ErrNoIndex)
	}
	return coll, nil
}

// DocTable reads the document table record of the generation man describes, checked against
// its sum and framing, into memory.
func (s *Store) DocTable(ctx context.Context, man *manifest.Manifest) (store.DocTable, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return nil, err
	}
	coll := e.Collection(manifest.GenerationName(man.Generation))
	b, err := e.ReadDocTable(ctx, coll, man)
	if err != nil {
		return nil, err
	}
	if _, err := doctable.Format.Open(b); err != nil {
		return nil, &backend.DamagedError{Path: s.where(coll) + " document table", What: err.Error()}
	}
	return readCloser{bytes.NewReader(b)}, nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// where names collection coll of the index in messages.
func (s *Store) where(coll string) string { return s.String() + " (collection " + coll + ")" }

// Checkpoints on Qdrant. A checkpoint is a complete generation (its points, BM25 metadata,
// document table and manifest records) that the alias does not name, with a third record: the
// checkpoint itself (inputs with their sha256, options, how far the build had read), written
// last. The build goes on in a new collection copied from it. The pending checkpoint is the
// newest collection above the live one that holds a checkpoint record; collections without
// one (an unfinished writer's) are dropped by the next commit.

// Checkpoint returns the newest checkpoint above the live generation, nil when there is none.
func (s *Store) Checkpoint(ctx context.Context) (*manifest.Checkpoint, error) {
	live, err := s.Live(ctx)
	if err != nil {
		return nil, err
	}
	return s.e.PendingCheckpoint(ctx, live)
}

// DropCheckpoint drops the collection of the pending checkpoint, if any.
func (s *Store) DropCheckpoint(ctx context.Context) error {
	cp, err := s.Checkpoint(ctx)
	if err != nil || cp == nil {
		return err
	}
	return s.e.Drop(ctx, backend.Gen{Name: cp.Generation})
}

// Open opens generation gen (0: the live one): its passages, BM25 and vectors, connected for
// the dimension of its vectors. A check level applies to the records: CheckFull reads the
// document table record against its sum (the points are checked by Verify); binary
// rescoring is refused before any contact, a cluster's vectors having no binary codes.
func (s *Store) Open(ctx context.Context, gen int, o store.ReadOptions) (*store.Parts, error) {
	if o.BinaryRescore != "" {
		return nil, errors.New("binary rescoring (--binary-rescore) applies to a local index with binary codes, not to one on a Qdrant cluster")
	}
	man, err := s.Manifest(ctx, gen)
	if err != nil {
		return nil, err
	}
	dim := placeholderDim
	if man.Dense != nil {
		dim = man.Dense.Model.Dim
	}
	e, _, err := s.connect(ctx, store.CollectionOptions{}, dim)
	if err != nil {
		return nil, err
	}
	g := backend.Gen{Name: manifest.GenerationName(man.Generation)}
	coll := e.Collection(g.Name)
	where := s.where(coll)
	fail := func(err error) (*store.Parts, error) {
		e.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if o.Level == store.CheckFull {
		if _, err := e.ReadDocTable(ctx, coll, man); err != nil {
			return fail(err)
		}
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
		return fail(&backend.DamagedError{Path: where, What: fmt.Sprintf("%d passages, the manifest says %d", passages.Live(), man.Counts.Passages)})
	}
	lex, err := e.OpenLexical(ctx, coll, backend.Scoring{Params: o.BM25, Stats: stats})
	if err != nil {
		return fail(err)
	}
	var vecs backend.VectorReader
	if !o.SkipVectors && man.Dense != nil {
		if vecs, err = e.Vectors().Open(ctx, g, passages); err != nil {
			return fail(err)
		}
		if vecs.Len() != man.Dense.Vectors {
			return fail(&backend.DamagedError{Path: where, What: fmt.Sprintf("%d dense vectors, the manifest says %d", vecs.Len(), man.Dense.Vectors)})
		}
	}
	p := &store.Parts{Where: where, Manifest: man, Passages: passages, Lexical: lex, Vectors: vecs, Release: e.Close}
	if vecs != nil {
		p.Hybrid = lex
	}
	return p, nil
}

// Verify checks generation gen (0: the live one): the manifest record and its checksum, the
// document table record against the manifest's sum, that the table lists exactly the
// passages the collection holds, and the engine's checks (counts, BM25 metadata, every
// passage with its BM25 weights and, with embeddings, its dense vector).
func (s *Store) Verify(ctx context.Context, gen int) (*store.VerifyReport, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return nil, err
	}
	coll, err := s.collection(ctx, e, gen)
	if err != nil {
		return nil, err
	}
	man, err := e.ReadManifest(ctx, coll)
	if err != nil {
		var de *backend.DamagedError
		if errors.As(err, &de) {
			rep := &store.VerifyReport{Generation: s.String()}
			rep.Add(de.Path, de.What)
			return rep, nil
		}
		return nil, err
	}
	dim := placeholderDim
	if man.Dense != nil {
		dim = man.Dense.Model.Dim
	}
	if e, _, err = s.connect(ctx, store.CollectionOptions{}, dim); err != nil {
		return nil, err
	}
	defer e.Close()
	where := s.where(coll)
	rep := &store.VerifyReport{Generation: where}
	bad := func(what string, format string, a ...any) { rep.Add(where+" "+what, fmt.Sprintf(format, a...)) }
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
		var de *backend.DamagedError
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
