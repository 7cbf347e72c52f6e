// Package genstore holds what crosses the seam between the index driver (package indexer)
// and a store that keeps an index's generations away from the local disk (a Qdrant cluster:
// indexer/backend/qdrant). The driver defines the interface it consumes; this package holds
// the values on both sides of it, so that neither package imports the other: the engines a
// store hands a writer (Writers), the parts of a generation it opens (Parts) and what its
// check found (VerifyReport).
package genstore

import (
	"context"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Writers are the engines a store connected for a writer: they hold the passage, lexical
// and vector parts of the generations it writes, keyed as the driver numbers the passages.
type Writers struct {
	Passages backend.PassageStore
	Lexical  backend.Lexical
	Vectors  backend.Vectors
	// Build records where and how the generations are written (the manifest's options).
	Build manifest.QdrantBuild
	// Close releases the engines' connection once the writer is done.
	Close func() error
}

// ReadOptions say how a store opens a generation's parts.
type ReadOptions struct {
	// BM25 are the parameters the lexical part scores with; zero leaves the engine's.
	BM25 backend.BM25Params
	// SkipVectors leaves the vector part closed (a writer that does not need it).
	SkipVectors bool
}

// Parts are one generation opened by a store: its manifest, its parts and its document
// table. Close releases the connection they read through.
type Parts struct {
	// Where names the generation for messages (the location and its collection).
	Where    string
	Manifest *manifest.Manifest
	Passages backend.Passages
	Lexical  backend.LexicalReader
	Vectors  backend.VectorReader // nil when skipped or the index has no embeddings
	// DocTable reads the document table, checked against the manifest's sum.
	DocTable func(ctx context.Context) ([]byte, error)
	// Close releases what the parts read through.
	Close func() error
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
