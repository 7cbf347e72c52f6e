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
	// DocEvidence lets the other retrieved passages of a document lift a passage: its score
	// becomes s + DocEvidence * (sum of the scores of the other candidates from the same
	// document). Scientific abstracts and Wikipedia articles split into several passages, and a
	// document that matches in several places is more likely relevant. 0 means
	// DefaultDocEvidence; negative disables it.
	DocEvidence float64
	// Window is how many BM25 candidates are scored before the document evidence is applied
	// and the top K kept. 0 means DefaultWindow; it is never below K.
	Window int
}

// Defaults chosen on the SciFact train qrels (README, "BM25 tuning").
const (
	DefaultDocEvidence = 0.1
	DefaultWindow      = 100
)

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
	if opts.DocEvidence == 0 {
		opts.DocEvidence = DefaultDocEvidence
	}
	if opts.Window == 0 {
		opts.Window = DefaultWindow
	}
	if opts.Window < 0 {
		return nil, fmt.Errorf("search options: negative window %d", opts.Window)
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
