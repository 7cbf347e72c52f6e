package qdrant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/genstore"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Store keeps the generations of one index on a Qdrant cluster: generation g is the
// collection NAME-g-00000g holding the passages, both vectors, the BM25 metadata and, as
// records, the manifest and the document table; the alias NAME names the live one. A
// generation is committed when its manifest record exists and the alias points at it, so the
// swap of the alias switches manifest and data at once. Nothing of it lives locally: a
// writer's directory is scratch space, removed after publishing.
//
// The index driver (package indexer) runs builds, updates and resumes over a Store; it
// consumes it through an interface of its own, and the values that cross are genstore's.
//
// The engine a writer uses is connected for the dimension of its vectors (Writers,
// DeriveWriters); the lifecycle methods called without one connect for records only
// (records carry no vector), and Close releases that connection.
type Store struct {
	loc  *Location
	opts StoreOptions
	log  *slog.Logger // nil: slog's default
	e    *Engine
	own  bool // e was connected by engine and is closed by Close
	keep int  // the checkpoint generation of the build, kept by Drop (0: none)
}

// NewStore returns the store of the index at loc, whose new collections take opts. It
// connects to nothing yet: each operation connects as it needs (the dimension of a
// collection is known only from a manifest or an encoder).
func NewStore(loc *Location, opts StoreOptions, log *slog.Logger) *Store {
	return &Store{loc: loc, opts: opts, log: log}
}

// String is the location of the index.
func (s *Store) String() string { return s.loc.String() }

// logger is the operation's logger; a store opened without one logs to slog's default.
func (s *Store) logger() *slog.Logger {
	if s.log == nil {
		return slog.Default()
	}
	return s.log
}

// connect connects to the cluster for vectors of dim, with collections made as o says.
func (s *Store) connect(ctx context.Context, o StoreOptions, dim int) (*Engine, error) {
	b := o.Build(s.loc)
	return New(ctx, Options{Hosts: s.loc.Hosts, REST: s.loc.REST, Index: s.loc.Name, Dim: dim, Shards: b.Shards, Replication: b.Replication,
		BM25: backend.BM25Params{K1: b.K1, B: b.B}, Logger: s.log})
}

// engine is the connected engine: the writer's, else one connected for records.
func (s *Store) engine(ctx context.Context) (*Engine, error) {
	if s.e != nil {
		return s.e, nil
	}
	e, err := s.connect(ctx, StoreOptions{}, placeholderDim)
	if err != nil {
		return nil, err
	}
	s.e, s.own = e, true
	return e, nil
}

// Close releases the connection the store made for its own calls; a writer's engine is its
// writer's to close (Writers.Close), and opened Parts close their own.
func (s *Store) Close() error {
	if !s.own || s.e == nil {
		return nil
	}
	e := s.e
	s.e, s.own = nil, false
	return e.Close()
}

// Live is the number of the live generation, 0 when there is none.
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

// Begin numbers a new generation and makes the local scratch directory its writer fills.
func (s *Store) Begin(ctx context.Context) (int, string, error) {
	e, err := s.engine(ctx)
	if err != nil {
		return 0, "", err
	}
	next, err := e.NextGeneration(ctx)
	if err != nil {
		return 0, "", err
	}
	dir, err := os.MkdirTemp("", "kairos-qdrant-"+manifest.GenerationName(next)+"-*")
	return next, dir, err
}

// Commit publishes generation gen, sealed in dir: its records, then the alias.
func (s *Store) Commit(ctx context.Context, gen int, dir string, man *manifest.Manifest) error {
	e, err := s.engine(ctx)
	if err != nil {
		return err
	}
	if err := s.store(ctx, e, gen, dir, man); err != nil {
		return err
	}
	if err := e.Promote(ctx, backend.Gen{Name: manifest.GenerationName(gen)}); err != nil {
		return err
	}
	s.removeScratch(dir)
	return nil
}

// store writes the records of generation gen, sealed in dir: its document table, then its
// manifest (Engine.WriteGeneration).
func (s *Store) store(ctx context.Context, e *Engine, gen int, dir string, man *manifest.Manifest) error {
	docs, err := os.ReadFile(filepath.Join(dir, doctable.FileName))
	if err != nil {
		return err
	}
	return e.WriteGeneration(ctx, gen, docs, man)
}

// removeScratch removes a writer's scratch directory once what it held is published.
func (s *Store) removeScratch(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		s.logger().Warn("removing scratch directory", "dir", dir, "err", err)
	}
}

// Drop removes every generation other than live, prev and the build's checkpoint.
func (s *Store) Drop(ctx context.Context, live, prev int) error {
	e, err := s.engine(ctx)
	if err != nil {
		return err
	}
	return e.DropGenerations(ctx, func(n int) bool { return n == live || n == prev || n == s.keep })
}

// Discard drops the unpublished collection of gen and its scratch directory; the build's
// context may be over, so it gets its own bounded one.
func (s *Store) Discard(gen int, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e, err := s.engine(ctx); err != nil {
		s.logger().Warn("dropping unfinished generation", "index", s.String(), "generation", gen, "err", err)
	} else if err := e.Drop(ctx, backend.Gen{Name: manifest.GenerationName(gen)}); err != nil {
		s.logger().Warn("dropping unfinished generation", "index", s.String(), "generation", gen, "err", err)
	}
	os.RemoveAll(dir)
}

// Keep makes Drop keep generation gen, the build's checkpoint; 0 keeps none (the build is
// committed, and the next Drop removes its checkpoint).
func (s *Store) Keep(gen int) { s.keep = gen }

// CheckBuild refuses, before any connection, what a build of an index on a cluster cannot
// do: a local lexical engine, or binary codes of the local HNSW graph.
func (s *Store) CheckBuild(lexical string, binaryCodes bool) error {
	if binaryCodes {
		return errors.New("--vectors binary: binary codes are the local HNSW graph's; an index on Qdrant keeps its vectors in Qdrant")
	}
	if lexical != "" {
		return fmt.Errorf("--lexical %s: an index on Qdrant keeps its BM25 in the cluster", lexical)
	}
	return nil
}

// Writers connects the engines of a build whose vectors have dimension dim (0: an index
// without embeddings). The store's lifecycle calls go through them until they are closed.
func (s *Store) Writers(ctx context.Context, dim int) (*genstore.Writers, error) {
	if dim == 0 {
		dim = placeholderDim
	}
	e, err := s.connect(ctx, s.opts, dim)
	if err != nil {
		return nil, err
	}
	return s.writers(e, s.opts), nil
}

// DeriveWriters connects the engines of an update or delete on top of the generation base
// describes: its collection is made like base's (shards, replication, BM25 parameters),
// unless the location asks for other shards or replication.
func (s *Store) DeriveWriters(ctx context.Context, base *manifest.Manifest) (*genstore.Writers, error) {
	o := s.opts
	if qb := base.Options.Qdrant; qb != nil {
		o = StoreOptions{Shards: qb.Shards, Replication: qb.Replication, BM25: backend.BM25Params{K1: qb.K1, B: qb.B}}
	}
	e, err := s.connect(ctx, o, denseDim(base))
	if err != nil {
		return nil, err
	}
	return s.writers(e, o), nil
}

// writers hands e's engines to a writer and routes the store's own calls through e.
func (s *Store) writers(e *Engine, o StoreOptions) *genstore.Writers {
	if s.own && s.e != nil {
		s.e.Close()
	}
	s.e, s.own = e, false
	return &genstore.Writers{Passages: e.PassageStore(), Lexical: e.Lexical(), Vectors: e.Vectors(), Build: o.Build(s.loc),
		Close: func() error {
			if s.e == e {
				s.e = nil
			}
			return e.Close()
		}}
}

// denseDim is the dimension of the collections of the index man describes.
func denseDim(man *manifest.Manifest) int {
	if man.Dense != nil {
		return man.Dense.Model.Dim
	}
	return placeholderDim
}
