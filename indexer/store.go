package indexer

import (
	"context"
	"io"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/doctable"
)

// Store is where the generations of an index live: a local directory (dirStore) or a remote
// store (remoteStore over qdrant.Store, a Qdrant cluster). It numbers, commits and drops
// generations and keeps the records that describe them (the manifest, the document table,
// the checkpoint of a build in progress). openStore is the one place that decides which
// implementation serves a location; everything above it (Build, Resume, Update, Delete,
// Compact, Open, Verify, the checkpoint queries) asks the Store and never looks at the
// location itself.
//
// The interface is sealed (its lifecycle methods are unexported): a new kind of location is
// a new case in openStore and, for a store away from the local disk, a new implementation of
// remote (remotestore.go) in its own package; every writer shares the driver, the manifest
// and the document table.
type Store interface {
	// Location is where the store is.
	Location() Location
	// Live is the number of the live generation, 0 when there is none.
	Live(ctx context.Context) (int, error)
	// Begin numbers a new generation and makes the empty local directory its writer fills:
	// the generation itself (a directory), or scratch space for what a remote one keeps
	// locally while it is written (Qdrant).
	Begin(ctx context.Context) (gen int, dir string, err error)
	// Commit makes generation gen, written and sealed in dir, live.
	Commit(ctx context.Context, gen int, dir string, man *Manifest) error
	// Drop removes every generation other than live and prev (and the checkpoint of the
	// build in progress), unfinished ones included.
	Drop(ctx context.Context, live, prev int) error
	// Discard removes what a writer of gen that did not commit left.
	Discard(gen int, dir string)
	// Manifest reads the manifest of the live generation; the error wraps ErrNoIndex when
	// there is none.
	Manifest(ctx context.Context) (*Manifest, error)
	// Open opens the live generation for reading.
	Open(ctx context.Context, o OpenOptions) (*Generation, error)
	// Verify checks the live generation (see VerifyGeneration for a directory's checks).
	Verify(ctx context.Context) (*VerifyReport, error)
	// PendingCheckpoint describes the checkpoint a build left behind, nil when none.
	PendingCheckpoint(ctx context.Context) (*CheckpointInfo, error)
	// Close releases what the store connected to for its own calls (Live, Begin, Commit,
	// Drop, Discard, PendingCheckpoint); the Generations it opened are closed on their own.
	Close() error

	// build writes a new generation from opts (validated) and makes it live.
	build(ctx context.Context, opts *Options) (*Summary, error)
	// resume continues the build whose checkpoint the store holds, or builds from scratch.
	resume(ctx context.Context, opts *Options) (*Summary, error)
	// derive runs spec (an update or a delete) on top of the live generation.
	derive(ctx context.Context, opts *Options, spec runSpec) (*Summary, error)
	// compact writes the live generation again without what deletions left.
	compact(ctx context.Context, opts *Options) (*Summary, error)
	// commitCheckpoint commits generation gen, sealed in d.tmp, as the checkpoint at pos and
	// returns it opened as the base the build goes on from (vec: the graph in memory).
	commitCheckpoint(ctx context.Context, d *driver, gen int, man *Manifest, pos position, vec backend.VectorWriter) (*Generation, error)
	// checkpointDir is the directory of the pending checkpoint generation, "" when there is
	// none or it is not a directory.
	checkpointDir() (string, error)
	// dropCheckpoint forgets the build's checkpoint once the build is committed; the next
	// Drop removes its generation.
	dropCheckpoint() error
	// checkpointCopies reports whether a checkpoint copies the whole generation (its cost
	// grows with the index) rather than sharing its files.
	checkpointCopies() bool
}

// OpenStore returns the store of the index at loc, with default options (openStore).
func OpenStore(loc Location) Store { return openStore(loc, nil) }

// openStore returns the store of the index at loc, with the fault hook, logger and Qdrant
// options of opts (nil: none): the one place that tells a local directory from a Qdrant
// cluster. It connects to nothing yet: each operation connects as it needs (the dimension of
// a Qdrant collection is known only from a manifest or an encoder).
func openStore(loc Location, opts *Options) Store {
	if opts == nil {
		opts = &Options{}
	}
	switch {
	case loc.Qdrant != nil:
		return &remoteStore{r: qdrant.NewStore(loc.Qdrant, opts.Qdrant, opts.Logger), loc: loc}
	default:
		return dirStore{dir: loc.Dir, at: opts.at}
	}
}

// storeOf parses the location s and opens its store, with the options of opts (nil: none).
func storeOf(s string, opts *Options) (Store, error) {
	loc, err := ParseLocation(s)
	if err != nil {
		return nil, err
	}
	return openStore(loc, opts), nil
}

// genSource is what an open Generation reads beyond its engines' parts, where it lives: its
// document table; and what it releases once a writer has gone on from it.
type genSource interface {
	// docTable reads the document table, checked against the manifest's sum.
	docTable(ctx context.Context, g *Generation) (map[string]*doctable.Entry, error)
	// docTableFile opens the document table to be read as a stream.
	docTableFile(ctx context.Context, g *Generation) (io.ReadSeeker, io.Closer, error)
	// release closes what a checkpoint base the writer went on from still holds.
	release(g *Generation)
	// close releases what the generation holds beyond its engines' readers.
	close(g *Generation) error
}

// LiveManifest returns the manifest of the live generation of the index at loc (a directory
// or a qdrant:// location); the error wraps ErrNoIndex when there is none.
func LiveManifest(ctx context.Context, loc string) (*Manifest, error) {
	st, err := storeOf(loc, nil)
	if err != nil {
		return nil, err
	}
	return st.Manifest(ctx)
}
