package search

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
)

// Options tune retrieval. The zero value gives the defaults.
type Options struct {
	// TitleBoost weights a match in the title field against the passage text (which already
	// starts with the title). 0 means DefaultTitleBoost; negative disables the title clause.
	TitleBoost float64
}

// DefaultTitleBoost was chosen on the SciFact train qrels (see README, "BM25 tuning").
const DefaultTitleBoost = 0.0

// ErrNotFound is returned for an unknown passage id.
var ErrNotFound = errors.New("not found")

// Index answers queries against one opened generation of a Kairos index. It is safe for
// concurrent use. Close it when done; a reload opens a new Index and closes the old one.
type Index struct {
	gen      *indexer.Generation
	opts     Options
	analyzer analysis.Analyzer

	idsOnce sync.Once
	ids     map[string]uint32 // passage id -> key, built on first Passage lookup
	idsErr  error
}

// Open opens the live generation of the index at dir.
func Open(dir string, opts Options) (*Index, error) {
	if opts.TitleBoost == 0 {
		opts.TitleBoost = DefaultTitleBoost
	}
	gen, err := indexer.Open(dir)
	if err != nil {
		return nil, err
	}
	an := gen.BM25.Mapping().AnalyzerNamed(indexer.Analyzer)
	if an == nil {
		gen.Close()
		return nil, fmt.Errorf("analyzer %q missing", indexer.Analyzer)
	}
	setBM25Params()
	return &Index{gen: gen, opts: opts, analyzer: an}, nil
}

// Close releases the index files.
func (ix *Index) Close() error { return ix.gen.Close() }

// Manifest returns the manifest of the opened generation.
func (ix *Index) Manifest() *indexer.Manifest { return ix.gen.Manifest }

// Passage returns the passage with the given id (e.g. "12#0"), or an error wrapping ErrNotFound.
func (ix *Index) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	ix.idsOnce.Do(func() {
		ids := make(map[string]uint32, ix.gen.Store.Len())
		ix.idsErr = ix.gen.Store.Each(func(key uint32, p corpus.Passage) error {
			ids[p.ID] = key
			return nil
		})
		ix.ids = ids
	})
	if ix.idsErr != nil {
		return corpus.Passage{}, ix.idsErr
	}
	key, ok := ix.ids[id]
	if !ok {
		return corpus.Passage{}, fmt.Errorf("passage %q: %w", id, ErrNotFound)
	}
	return ix.gen.Store.Get(key)
}

// Stats describes the opened index.
func (ix *Index) Stats() Stats {
	m := ix.gen.Manifest
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	return Stats{
		Documents: m.Counts.Documents, Passages: m.Counts.Passages, Sources: m.Sources,
		DateFrom: m.DateFrom, DateTo: m.DateTo, Created: m.Created, Version: m.FormatVersion,
		SizeBytes: size,
	}
}

// Search runs one request.
func (ix *Index) Search(ctx context.Context, req Request) ([]Hit, error) {
	if req.K <= 0 {
		req.K = DefaultK
	}
	switch req.Mode {
	case "", ModeBM25:
		return ix.searchBM25(ctx, req)
	default:
		return nil, fmt.Errorf("search mode %q: this index has no dense vectors", req.Mode)
	}
}
