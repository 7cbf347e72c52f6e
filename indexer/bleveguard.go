package indexer

import (
	"context"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"
)

// guardedIndex is a bleve index whose calls recover bleve's panics on damaged files and
// return them as *DamagedError, so a damaged segment that the checks at open did not cover
// (beyond CheapHashBudget) fails the one request that reads it, not the process. Panics in
// goroutines bleve starts itself cannot be recovered here; the checks at open exist for
// those.
type guardedIndex struct {
	bleveIndex
	path string // the bleve directory, named in errors
}

var _ bleve.Index = (*guardedIndex)(nil)

func (g *guardedIndex) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (res *bleve.SearchResult, err error) {
	defer recoverDamaged(g.path, &err)
	return g.bleveIndex.SearchInContext(ctx, req)
}

func (g *guardedIndex) Search(req *bleve.SearchRequest) (res *bleve.SearchResult, err error) {
	defer recoverDamaged(g.path, &err)
	return g.bleveIndex.Search(req)
}

func (g *guardedIndex) DocCount() (n uint64, err error) {
	defer recoverDamaged(g.path, &err)
	return g.bleveIndex.DocCount()
}

func (g *guardedIndex) Batch(b *bleve.Batch) (err error) {
	defer recoverDamaged(g.path, &err)
	return g.bleveIndex.Batch(b)
}

func (g *guardedIndex) Advanced() (ix index.Index, err error) {
	defer recoverDamaged(g.path, &err)
	return g.bleveIndex.Advanced()
}

// bleveIndex names bleve.Index for embedding: the interface has a method called Index, so the
// embedded field must be called something else.
type bleveIndex = bleve.Index

// openBleve opens the bleve index at path (read-only or for writing), recovering a panic on
// damaged files as a *DamagedError.
func openBleve(path string, readOnly bool) (idx bleve.Index, err error) {
	defer recoverDamaged(path, &err)
	if readOnly {
		idx, err = bleve.OpenUsing(path, map[string]interface{}{"read_only": true})
	} else {
		idx, err = bleve.Open(path)
	}
	if err != nil {
		return nil, err
	}
	return &guardedIndex{bleveIndex: idx, path: path}, nil
}
