package indexer

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
)

// A generation is one immutable version of an index: a g-NNNNNN directory of a local index
// (indexer/store/local describes the layout), a collection on Qdrant
// (indexer/store/qdrant). A writer prepares one beside the live generation and commits it
// through the store, so a crash at any point leaves the previous generation live.

// ErrNoIndex is returned when a location holds no committed index (manifest.ErrNoIndex).
var ErrNoIndex = manifest.ErrNoIndex

// NoIndexError says why a local directory holds no index (manifest.NoIndexError).
type NoIndexError = manifest.NoIndexError

// ErrLocked is returned when another process is writing the index (store.ErrLocked).
var ErrLocked = store.ErrLocked

// GenerationName is the name of generation n ("g-000003"): its directory in a local index,
// the suffix of its collection on Qdrant (manifest.GenerationName).
func GenerationName(n int) string { return manifest.GenerationName(n) }

// Generation is one committed generation of an index, opened for reading (Index.Reader).
type Generation struct {
	// Dir names the generation: its directory, or the location and its collection.
	Dir      string
	Manifest *Manifest
	Passages backend.Passages      // the live passages, wherever they are kept
	Lexical  backend.LexicalReader // holds exactly the live passages
	Vectors  backend.VectorReader  // nil when the index has no embeddings; deleted keys deleted
	// Hybrid answers a BM25 and a dense query in one call where the engine holds both parts
	// in one place (Qdrant); nil otherwise.
	Hybrid backend.HybridSearcher
	// Outdated says what the generation lacks that a build of this version writes and
	// compaction adds (store.Parts.Outdated); "" when nothing.
	Outdated string

	st      store.Store  // where the generation lives: its document table
	release func() error // what the parts read through (store.Parts.Release)
}

// docTable reads the generation's document table, checked against the manifest.
func (g *Generation) docTable(ctx context.Context) (map[string]*doctable.Entry, error) {
	f, err := g.st.DocTable(ctx, g.Manifest)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	t, err := doctable.Parse(b)
	if err != nil {
		return nil, &DamagedError{Path: g.Dir + " document table", What: err.Error()}
	}
	return t, nil
}

// docTableFile opens the generation's document table to be read as a stream (a build that
// resumes from it merges it with what it adds: indexer/doctable/log.go).
func (g *Generation) docTableFile(ctx context.Context) (io.ReadSeeker, io.Closer, error) {
	f, err := g.st.DocTable(ctx, g.Manifest)
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// Close releases the generation's readers and what they read through. A reader a writer took
// over (the vectors of a base) or closed early (its lexical part) is set to nil there.
func (g *Generation) Close() error {
	var errs []error
	if g.Lexical != nil {
		errs = append(errs, g.Lexical.Close())
	}
	if g.Vectors != nil {
		errs = append(errs, g.Vectors.Close())
	}
	if g.release != nil {
		errs = append(errs, g.release())
	}
	return errors.Join(errs...)
}

// syncTree fsyncs every file and directory under root, so a rename after it publishes data
// that is on disk.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}
