package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/ivfvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// lexicalEngine is one row of the table of local lexical engines: the name a manifest
// records, its constructor (given the build's RAM budget) and where its files sit in a
// generation.
type lexicalEngine struct {
	name string
	new  func(ramBudget int64) backend.Lexical
	dir  func(genDir string) string
}

// lexicalEngines is the one table of local lexical engines, name to constructor: every place
// that turns a name into an engine, a directory or an error message reads it.
var lexicalEngines = [...]lexicalEngine{
	{manifest.LexicalPostings, func(b int64) backend.Lexical { return postingsbm25.Engine{RAMBudget: b} }, postingsbm25.Dir},
	{manifest.LexicalBleve, func(int64) backend.Lexical { return blevebm25.Engine{} }, blevebm25.Dir},
}

// lexicalNamed returns the row of name as a manifest reads it (manifest.LexicalName).
func lexicalNamed(name string) (lexicalEngine, error) {
	name = manifest.LexicalName(name)
	var names []string
	for _, e := range lexicalEngines {
		if e.name == name {
			return e, nil
		}
		names = append(names, e.name)
	}
	if name == manifest.LexicalQdrant {
		return lexicalEngine{}, fmt.Errorf("lexical engine %q is not a local one (want %s; an index on Qdrant is named by its qdrant:// location)", name, strings.Join(names, " or "))
	}
	return lexicalEngine{}, fmt.Errorf("unknown lexical engine %q (want %s)", name, strings.Join(names, " or "))
}

// lexicalDir is the directory of a generation's lexical part for the engine named name (the
// generation itself for an unknown one).
func lexicalDir(genDir, name string) string {
	if e, err := lexicalNamed(name); err == nil {
		return e.dir(genDir)
	}
	return genDir
}

// inLexicalDir reports whether name, a file of the manifest of the generation at gen, belongs
// to its lexical part.
func inLexicalDir(gen string, man *manifest.Manifest, name string) bool {
	rel, err := filepath.Rel(gen, lexicalDir(gen, man.Options.Lexical))
	return err == nil && strings.HasPrefix(name, filepath.ToSlash(rel)+"/")
}

// Engines returns the local engines: the passage store (kpst), the lexical engine spec names
// (manifest.DefaultLexical for a new index that names none; a base's "" is bleve, the engine
// of the indexes written before the name was recorded) and the vector engine of the kind
// vectorIndex chooses: the HNSW graph (hnswvec) or the inverted file (ivfvec), with spec's
// parameters for new ones. Nothing is connected: the engines write their files in the
// writer's directory. A directory has no collections: spec.Collections do not concern it.
func (s *Store) Engines(_ context.Context, spec store.EngineSpec) (*store.Connected, error) {
	name := spec.Lexical
	if name == "" && spec.Base == nil {
		name = manifest.DefaultLexical
	}
	lex, err := lexicalNamed(name)
	if err != nil {
		return nil, err
	}
	var vecs backend.Vectors
	kind := vectorIndex(spec)
	switch kind {
	case manifest.VectorIndexHNSW:
		vecs = hnswvec.Engine{Params: spec.HNSW}
	case manifest.VectorIndexIVF:
		if spec.HNSW.Codes != "" && spec.HNSW.CodesKind() == hnsw.CodesBinary {
			return nil, errors.New("--vectors binary: binary codes are the HNSW graph's; the inverted file (--vector-index ivf) keeps one-bit codes of its own")
		}
		vecs = ivfvec.Engine{Params: spec.IVF}
	default:
		return nil, fmt.Errorf("--vector-index %q: want %s or %s", kind, manifest.VectorIndexHNSW, manifest.VectorIndexIVF)
	}
	c := &store.Connected{
		Engines: store.Engines{
			Passages: kpst.Engine{},
			Lexical:  lex.new(spec.RAMBudget),
			Vectors:  vecs,
		},
		LexicalName: name,
		VectorIndex: kind,
	}
	if o := spec.Override; o.Passages != nil {
		c.Passages = o.Passages
	}
	if o := spec.Override; o.Lexical != nil {
		c.Lexical = o.Lexical
	}
	if o := spec.Override; o.Vectors != nil {
		c.Vectors = o.Vectors
	}
	return c, nil
}

// vectorIndex is the kind of dense index a writer of spec writes: its base's, the one spec
// names, or, when it names none, the inverted file from spec.IVFFrom vectors and the graph
// below (and when the count is not known).
func vectorIndex(spec store.EngineSpec) string {
	switch {
	case spec.Base != nil && spec.Base.Dense != nil:
		return spec.Base.Dense.IndexKind()
	case spec.VectorIndex != "":
		return spec.VectorIndex
	case spec.IVFFrom > 0 && spec.Vectors >= spec.IVFFrom:
		return manifest.VectorIndexIVF
	}
	return manifest.VectorIndexHNSW
}
