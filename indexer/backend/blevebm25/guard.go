package blevebm25

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// guardedIndex is a bleve index whose calls recover bleve's panics on damaged files and
// return them as *backend.DamagedError, so a damaged segment that the checks at open did not
// cover fails the one request that reads it, not the process. Panics in goroutines bleve
// starts itself cannot be recovered here; the indexer's checks at open exist for those.
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
// damaged files as a *backend.DamagedError.
func openBleve(path string, readOnly bool) (idx bleve.Index, err error) {
	defer recoverDamaged(path, &err)
	if readOnly {
		// A reader opens a committed generation: bleve failing to read it, whether it
		// panics (older releases on a truncated segment) or says so, is damage.
		if idx, err = bleve.OpenUsing(path, map[string]interface{}{"read_only": true}); err != nil {
			return nil, &backend.DamagedError{Path: path, What: fmt.Sprintf("unreadable (%v)", err)}
		}
	} else if idx, err = bleve.Open(path); err != nil {
		return nil, err
	}
	return &guardedIndex{bleveIndex: idx, path: path}, nil
}

// recoverDamaged turns a panic inside bleve, zap or bolt into a *backend.DamagedError stored
// in *errp. Bleve trusts its files and indexes slices with offsets read from them, so a
// damaged file panics rather than failing; the panic stays inside the boundary, and the stack
// goes to the error only as its first frame inside the parser.
func recoverDamaged(path string, errp *error) {
	r := recover()
	if r == nil {
		return
	}
	*errp = &backend.DamagedError{Path: path, What: fmt.Sprintf("unreadable (%v at %s)", r, panicSite(debug.Stack()))}
}

// panicSite returns the function that panicked, from a debug.Stack trace: the first frame
// after the runtime's panic machinery.
func panicSite(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+2 < len(lines) {
			site := lines[i+2]
			if j := strings.LastIndex(site, "("); j > 0 {
				site = site[:j]
			}
			return site
		}
	}
	return "unknown site"
}
