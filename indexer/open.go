package indexer

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Generation is one committed generation of an index, opened for reading.
type Generation struct {
	Dir      string
	Manifest *Manifest
	Store    *Store      // live passages: Store.Each and Store.Dead skip tombstoned keys
	BM25     bleve.Index // holds exactly the live passages
	Dense    *hnsw.Graph // nil when the index has no embeddings; tombstoned keys deleted
}

// Open opens the live generation of the index at dir for reading. Later commits do not
// affect an open Generation: it keeps reading the files of its own generation.
func Open(dir string) (*Generation, error) {
	gen, err := Current(dir)
	if err != nil {
		return nil, err
	}
	return openGen(gen, true)
}

// OpenGeneration opens one generation directory (live, older or a checkpoint) for reading.
func OpenGeneration(genDir string) (*Generation, error) { return openGen(genDir, true) }

func openGen(gen string, loadDense bool) (*Generation, error) {
	man, err := ReadManifest(gen)
	if err != nil {
		return nil, err
	}
	store, err := openGenStore(gen, man)
	if err != nil {
		return nil, err
	}
	idx, err := OpenBM25(gen)
	if err != nil {
		return nil, fmt.Errorf("%s: opening bleve index: %w", gen, err)
	}
	var dense *hnsw.Graph
	if loadDense {
		if dense, err = openHNSW(gen, man); err != nil {
			idx.Close()
			return nil, err
		}
	}
	return &Generation{Dir: gen, Manifest: man, Store: store, BM25: idx, Dense: dense}, nil
}

// openGenStore opens a generation's store segments and tombstones and checks them against the
// manifest.
func openGenStore(gen string, man *Manifest) (*Store, error) {
	dead, err := readTombstones(filepath.Join(gen, tombName))
	if err != nil {
		return nil, err
	}
	if dead.Len() != man.Tombstones {
		return nil, fmt.Errorf("%s: %d tombstones, manifest says %d", gen, dead.Len(), man.Tombstones)
	}
	store, err := openStoreSegments(gen, man.segments(), dead)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gen, err)
	}
	if store.Live() != man.Counts.Passages {
		return nil, fmt.Errorf("%s: passage store has %d live passages, manifest %d", gen, store.Live(), man.Counts.Passages)
	}
	return store, nil
}

// Close releases the generation's files.
func (g *Generation) Close() error {
	return errors.Join(g.BM25.Close())
}
