package indexer

import (
	"context"
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

// Open opens the live generation of the index at dir for reading, after the cheap check of
// its files (CheckCheap). Later commits do not affect an open Generation: it keeps reading the
// files of its own generation. A damaged file is reported as a *DamagedError (ErrDamaged).
func Open(dir string) (*Generation, error) {
	return OpenChecked(context.Background(), dir, CheckCheap)
}

// OpenChecked opens the live generation of the index at dir after checking its files at
// level; CheckFull hashes every file (serve --verify).
func OpenChecked(ctx context.Context, dir string, level CheckLevel) (*Generation, error) {
	gen, err := Current(dir)
	if err != nil {
		return nil, err
	}
	return openGen(ctx, gen, level, true)
}

// OpenGeneration opens one generation directory (live, older or a checkpoint) for reading.
func OpenGeneration(genDir string) (*Generation, error) {
	return openGen(context.Background(), genDir, CheckCheap, true)
}

// openGen checks the files of gen against its manifest at level before any parser reads
// them, then opens the store, bleve and the graph. Every failure to read a file that the
// checks passed is reported as damage of that file too: the manifest promised it readable.
func openGen(ctx context.Context, gen string, level CheckLevel, loadDense bool) (*Generation, error) {
	man, err := ReadManifest(gen)
	if err != nil {
		return nil, err
	}
	if err := checkFiles(ctx, gen, man, level); err != nil {
		return nil, err
	}
	store, err := openGenStore(gen, man)
	if err != nil {
		return nil, asDamaged(gen, err)
	}
	idx, err := OpenBM25(gen)
	if err != nil {
		var de *DamagedError
		if !errors.As(err, &de) {
			de = &DamagedError{Path: bm25Path(gen), What: "opening: " + err.Error()}
		}
		return nil, damagedBM25File(gen, man, de)
	}
	var dense *hnsw.Graph
	if loadDense {
		if dense, err = openHNSW(gen, man); err != nil {
			idx.Close()
			return nil, &DamagedError{Path: hnswPath(gen), What: err.Error()}
		}
	}
	return &Generation{Dir: gen, Manifest: man, Store: store, BM25: idx, Dense: dense}, nil
}

// asDamaged marks err, an error reading the files of gen, as damage unless it already is.
func asDamaged(gen string, err error) error {
	if errors.Is(err, ErrDamaged) {
		return err
	}
	return &DamagedError{Path: gen, What: err.Error()}
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
