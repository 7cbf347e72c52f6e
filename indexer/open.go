package indexer

import (
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"

	"github.com/kairos-rag/kairos/search/hnsw"
)

// Generation is one committed generation of an index, opened for reading.
type Generation struct {
	Dir      string
	Manifest *Manifest
	Store    *Store
	BM25     bleve.Index
	Dense    *hnsw.Graph // nil when the index has no embeddings
}

// Open opens the live generation of the index at dir for reading. Later commits do not
// affect an open Generation: it keeps reading the files of its own generation.
func Open(dir string) (*Generation, error) {
	gen, err := Current(dir)
	if err != nil {
		return nil, err
	}
	man, err := ReadManifest(gen)
	if err != nil {
		return nil, err
	}
	store, err := OpenStore(gen + "/" + storeName)
	if err != nil {
		return nil, err
	}
	if store.Len() != man.Counts.Passages {
		return nil, fmt.Errorf("%s: passage store has %d passages, manifest %d", gen, store.Len(), man.Counts.Passages)
	}
	idx, err := OpenBM25(gen)
	if err != nil {
		return nil, fmt.Errorf("%s: opening bleve index: %w", gen, err)
	}
	dense, err := openHNSW(gen, man)
	if err != nil {
		idx.Close()
		return nil, err
	}
	return &Generation{Dir: gen, Manifest: man, Store: store, BM25: idx, Dense: dense}, nil
}

// Close releases the generation's files.
func (g *Generation) Close() error {
	return errors.Join(g.BM25.Close())
}
