package indexer

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Engines are the backends that hold the lexical and vector parts of a generation (see
// indexer/backend). A nil engine means the local one, each in its own package: for BM25 the
// one BuildOptions.Lexical names (bleve, blevebm25, or Kairos's own postings, postingsbm25;
// the manifest records it, so readers and updates use the engine that wrote the generation),
// and the HNSW graph (hnswvec); passages always go to the local store (kpst), whose keys every
// part shares.
type Engines struct {
	Lexical backend.Lexical
	Vectors backend.Vectors
}

// Lexical engines a build may name (BuildOptions.Lexical).
const (
	LexicalBleve    = "bleve"    // bleve's scorch index (the default; "" in older manifests)
	LexicalPostings = "postings" // Kairos's postings with block-max MaxScore
)

// lexicalEngine returns the local engine named name.
func lexicalEngine(name string) (backend.Lexical, error) {
	switch name {
	case "", LexicalBleve:
		return blevebm25.Engine{}, nil
	case LexicalPostings:
		return postingsbm25.Engine{}, nil
	}
	return nil, fmt.Errorf("unknown lexical engine %q (want %s or %s)", name, LexicalBleve, LexicalPostings)
}

// lexicalDir is the directory of a generation's lexical part for the engine named name.
func lexicalDir(genDir, name string) string {
	if name == LexicalPostings {
		return postingsbm25.Dir(genDir)
	}
	return blevebm25.Dir(genDir)
}

// hnswPath names the local vector engine's file of a generation in messages.
func hnswPath(genDir string) string { return hnswvec.Path(genDir) }

// adoptLexical makes an update continue in the lexical engine of the generation it derives
// from: the engine that wrote its files is the one that can extend them. Naming another is an
// error (rebuild to change engines).
func (o *Options) adoptLexical(base *Manifest) error {
	norm := func(s string) string {
		if s == "" {
			return LexicalBleve
		}
		return s
	}
	if o.Build.Lexical != "" && norm(o.Build.Lexical) != norm(base.Options.Lexical) {
		return fmt.Errorf("--lexical %s: the index uses the %s engine; rebuild it to change engines", o.Build.Lexical, norm(base.Options.Lexical))
	}
	o.Build.Lexical = base.Options.Lexical
	switch o.Engines.Lexical.(type) {
	case nil, blevebm25.Engine, postingsbm25.Engine: // a local default, chosen before the base was known
		var err error
		o.Engines.Lexical, err = lexicalEngine(o.Build.Lexical)
		o.applyRAMBudget()
		return err
	}
	return nil
}

// applyRAMBudget gives the postings engine, when it is the lexical one and has no budget of
// its own, the build's RAM budget.
func (o *Options) applyRAMBudget() {
	if e, ok := o.Engines.Lexical.(postingsbm25.Engine); ok && e.RAMBudget == 0 {
		e.RAMBudget = o.RAMBudget
		o.Engines.Lexical = e
	}
}

// inLexicalDir reports whether name, a file of the manifest of the generation at gen, belongs
// to its lexical part.
func inLexicalDir(gen string, man *Manifest, name string) bool {
	rel, err := filepath.Rel(gen, lexicalDir(gen, man.Options.Lexical))
	return err == nil && strings.HasPrefix(name, filepath.ToSlash(rel)+"/")
}

// withDefaults fills the engines left nil: lexical names the lexical engine, params are the
// graph parameters of new graphs.
func (e Engines) withDefaults(lexical string, params hnsw.Options) (Engines, error) {
	if e.Lexical == nil {
		var err error
		if e.Lexical, err = lexicalEngine(lexical); err != nil {
			return e, err
		}
	}
	if e.Vectors == nil {
		e.Vectors = hnswvec.Engine{Params: params}
	}
	return e, nil
}
