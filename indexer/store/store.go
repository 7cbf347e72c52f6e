// Package store declares where the generations of an index are kept: Store, the one seam
// between the index driver (package indexer, which runs every build, update, resume,
// compaction and check over it) and a place that holds generations. Its implementations are
// one subpackage each: local (a directory: a generation is a g-NNNNNN directory, CURRENT and
// CHECKPOINT are files) and qdrant (a Qdrant cluster: a generation is a collection, the live
// one an alias, the records are points). indexer.Open tells them apart from the location,
// once; nothing above the driver asks which it is.
//
// A Store numbers, publishes and drops generations, keeps the records that describe them
// (the manifest, the document table, the checkpoint of a build in progress) and connects
// the engines that write and read their parts (indexer/backend). What only one store does is
// an option or a result of these calls (EngineSpec.Collections, Connected.CheckpointCopies),
// never an interface the driver probes for.
package store

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// Store keeps the generations of one index.
type Store interface {
	// Lock takes the index's writer lock, held until unlock is called: one writer at a time.
	Lock(ctx context.Context) (unlock func(), err error)
	// Live is the number of the live generation, 0 when there is none.
	Live(ctx context.Context) (int, error)
	// Engines connects the engines of the generations a writer writes, as spec says; the
	// caller closes them.
	Engines(ctx context.Context, spec EngineSpec) (*Connected, error)
	// Begin numbers a new generation and makes the empty local directory its writer fills:
	// the generation itself (a directory), or scratch space for what a generation kept
	// elsewhere holds locally while it is written (Qdrant).
	Begin(ctx context.Context) (Writing, error)
	// Commit publishes generation w, written and sealed with man in w.Dir: as the live
	// generation, or, with o.Checkpoint, as the checkpoint of the build in progress (not
	// live; Drop keeps it until DropCheckpoint).
	Commit(ctx context.Context, w Writing, man *manifest.Manifest, o CommitOptions) error
	// Discard removes what a writer of w that did not commit left.
	Discard(ctx context.Context, w Writing) error
	// Drop removes every generation other than those of keep and the pending checkpoint,
	// unfinished ones included.
	Drop(ctx context.Context, keep ...int) error
	// Manifest reads and checks the manifest of generation gen, 0 for the live one; the
	// error wraps manifest.ErrNoIndex when there is no live generation.
	Manifest(ctx context.Context, gen int) (*manifest.Manifest, error)
	// DocTable opens the document table of the generation man describes, checked against
	// the sum man records.
	DocTable(ctx context.Context, man *manifest.Manifest) (DocTable, error)
	// Checkpoint reads the checkpoint record of a build in progress, nil when there is none.
	Checkpoint(ctx context.Context) (*manifest.Checkpoint, error)
	// DropCheckpoint forgets the checkpoint record; the next Drop removes its generation.
	DropCheckpoint(ctx context.Context) error
	// Open opens generation gen (0: the live one) for reading. What the store cannot read
	// as o asks is refused before it is asked anything.
	Open(ctx context.Context, gen int, o ReadOptions) (*Parts, error)
	// Verify checks in full what the store holds of generation gen (0: the live one): its
	// manifest, its files or records against it, and that its parts hold the same passages.
	// It returns an error only when it cannot check at all; defects are in the report.
	Verify(ctx context.Context, gen int) (*VerifyReport, error)
	// String names the location of the index, for messages.
	String() string
	// Close releases the store's own connection; engines and parts close on their own.
	Close() error
}

// Writing is a generation being written: its number and the local directory its writer
// fills.
type Writing struct {
	Gen int
	Dir string
}

// CommitOptions say how Commit publishes a generation.
type CommitOptions struct {
	// Checkpoint, when set, publishes the generation as the checkpoint of the build in
	// progress, this record (its Generation names it), instead of making it live.
	Checkpoint *manifest.Checkpoint
	// At, when set, is called at each named commit point of a local store (fault-injection
	// tests: an error it returns is handled as an I/O error there).
	At func(point string) error
}

// Engines are the engines of the parts of a generation (indexer/backend): the passage
// store, the lexical index and the vector index.
type Engines struct {
	Passages backend.PassageStore
	Lexical  backend.Lexical
	Vectors  backend.Vectors
}

// EngineSpec says what engines a writer needs.
type EngineSpec struct {
	// Base is the manifest of the generation the writer derives from (an update, a delete,
	// a compaction, the embedding half of a lexical-first build), nil for a new index: the
	// engines that wrote its parts continue them, with its collection settings.
	Base *manifest.Manifest
	// Lexical names the lexical engine of a new index (manifest.Lexical*); "" is the
	// store's default. With Base the caller has settled it to the base's.
	Lexical string
	// Dim is the dimension of the vectors the writer adds (0: none).
	Dim int
	// HNSW are the parameters of a new graph, for a store whose vector engine builds one;
	// binary codes are refused by a store that keeps no graph.
	HNSW hnsw.Options
	// VectorIndex names the kind of dense index of a new index (manifest.VectorIndex*); ""
	// lets the store choose: a local store writes the inverted file when Vectors, the number
	// of vectors the writer will add (0: not known), is at least IVFFrom (0: never), and the
	// graph otherwise; Qdrant keeps its own. With a Base that has vectors, the base's kind is
	// kept (the caller has refused another).
	VectorIndex string
	Vectors     int
	IVFFrom     int
	// IVF are the parameters of a new inverted file.
	IVF ivf.Options
	// RAMBudget bounds the memory of a postings build (0: its default).
	RAMBudget int64
	// Collections are the settings of new collections, for a store that keeps generations
	// as collections (Qdrant); a base's collections are copied.
	Collections CollectionOptions
	// Override replaces the store's engines by those set (tests wrap them to watch them).
	Override Engines
	// Logger receives the engines' retries and warnings; nil: nowhere.
	Logger *slog.Logger
}

// Connected are the engines a store connected for a writer, with what the manifest records of
// them.
type Connected struct {
	Engines
	// LexicalName is the lexical engine the manifest records (manifest.Lexical*).
	LexicalName string
	// VectorIndex is the kind of dense index the vector engine writes (manifest.VectorIndex*),
	// "" for an engine that keeps vectors of its own (Qdrant).
	VectorIndex string
	// Qdrant are the collection settings the manifest records, nil for a local index.
	Qdrant *manifest.QdrantBuild
	// CheckpointCopies says that a checkpoint copies the whole generation into the next one
	// (its cost grows with the index) rather than sharing its files.
	CheckpointCopies bool
	// Release closes the engines' connection once the writer is done; nil: nothing to close.
	Release func() error
}

// Close releases the engines' connection; closing again does nothing.
func (c *Connected) Close() error {
	if c == nil || c.Release == nil {
		return nil
	}
	release := c.Release
	c.Release = nil
	return release()
}

// CheckLevel says how thoroughly a generation's files are checked against its manifest before
// any of them is parsed.
type CheckLevel int

const (
	// CheckCheap (the default of a reader): the size of every file, and the sha256 of files
	// in ascending size order until CheapHashBudget bytes are hashed. Every small file is
	// always hashed; the big ones are hashed only while the budget lasts, so a small index is
	// fully checked at open and a large one costs at most the budget.
	CheckCheap CheckLevel = iota
	// CheckFull hashes every file (kairos verify, serve --verify); a store without files
	// reads its document table record against its sum.
	CheckFull
)

// CheapHashBudget is how many bytes CheckCheap hashes at most: about 0.1 s at the sha256
// speed of one core here, so `search` and `serve` stay quick to open.
const CheapHashBudget = 64 << 20

// ReadOptions say how a generation is opened for reading.
type ReadOptions struct {
	// Level is how thoroughly its files are checked against the manifest first.
	Level CheckLevel
	// BM25 are the parameters the lexical part scores with; zero leaves the engine's.
	BM25 backend.BM25Params
	// SkipVectors leaves the vector part closed (a writer that does not need it).
	SkipVectors bool
	// Trusted skips the checksums of the passage store: the generation was just written and
	// synced by this process (a checkpoint the build goes on from).
	Trusted bool
	// BinaryRescore is how a local graph with binary codes rescores its walk's candidates
	// (hnsw.LoadOptions.BinaryRescore); any other index refuses it rather than ignore it.
	BinaryRescore string
}

// Parts are one generation opened for reading.
type Parts struct {
	// Where names the generation in messages: its directory, or the location and its
	// collection.
	Where    string
	Manifest *manifest.Manifest
	Passages backend.Passages
	Lexical  backend.LexicalReader
	Vectors  backend.VectorReader // nil when skipped or the index has no embeddings
	// Hybrid answers a BM25 and a dense query in one call, for an engine that holds both
	// parts in one place (Qdrant: one round trip); nil otherwise.
	Hybrid backend.HybridSearcher
	// Release closes what the parts read through besides the lexical and vector readers
	// (the passage store, a cluster's connection).
	Release func() error
	// Outdated says what the generation lacks that a build of this version writes, and which
	// compaction adds (an inverted file without refinement codes that its options did not
	// ask to leave out); "" when nothing. Left "" when Vectors is skipped.
	Outdated string
}

// DocTable is a generation's document table opened for reading (indexer/doctable's format).
type DocTable interface {
	io.ReadSeeker
	io.Closer
}

// Problem is one defect found by a check of a generation.
type Problem struct {
	Path string `json:"path"` // file, directory or record concerned
	What string `json:"what"`
}

func (p Problem) String() string { return p.Path + ": " + p.What }

// VerifyReport lists what a check of a generation looked at and what it found.
type VerifyReport struct {
	Generation string    `json:"generation"`
	Files      int       `json:"files_checked"`
	Passages   int       `json:"passages"`
	Problems   []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Add records a problem of path.
func (r *VerifyReport) Add(path, what string) {
	r.Problems = append(r.Problems, Problem{Path: path, What: what})
}

// CollectionOptions configure the collections of a store that keeps each generation as a
// collection (Qdrant). The location's own settings (qdrant://...?shards=N&replication=N), when
// given, take precedence over them; a derived generation's collection copies its base's.
type CollectionOptions struct {
	// Shards per collection; 0: the engine's default.
	Shards uint32
	// Replication factor; 0: the engine's, min(the cluster's peers, 2).
	Replication uint32
	// BM25 are the k1 and b baked into the weights at build; searches must use the same.
	// Zero: backend.DefaultBM25, the searches' defaults.
	BM25 backend.BM25Params
}

// ErrLocked is returned when another process is writing the index.
var ErrLocked = errors.New("the index is being written by another process")
