package indexer

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Engines are the backends that hold the passage, lexical and vector parts of a generation
// (see indexer/backend). A nil engine means the local one, each in its own package: the
// passage store (kpst), for BM25 the one BuildOptions.Lexical names (Kairos's own postings,
// postingsbm25, the default of a new index, or bleve, blevebm25; the manifest records it, so
// readers and updates use the engine that wrote the generation), and the HNSW graph
// (hnswvec). The driver numbers the passages; every part keys them the same way.
type Engines struct {
	Passages backend.PassageStore
	Lexical  backend.Lexical
	Vectors  backend.Vectors
}

// Lexical engines a manifest may name (BuildOptions.Lexical); a local build names one of
// the first two. lexicalEngines is the table behind them. The names are recorded values,
// defined with the manifest.
const (
	LexicalBleve    = manifest.LexicalBleve
	LexicalPostings = manifest.LexicalPostings
	LexicalQdrant   = manifest.LexicalQdrant
)

// lexicalEngineSpec is one row of the engine table: the name a manifest records and, for a
// local engine, its constructor and where its files sit in a generation.
type lexicalEngineSpec struct {
	name  string
	local func() backend.Lexical // nil: not a local engine
	dir   func(genDir string) string
}

// lexicalEngines is the one table of lexical engines, name to constructor: every place that
// turns a name into an engine, a directory or an error message reads it.
func lexicalEngines() []lexicalEngineSpec {
	return []lexicalEngineSpec{
		{LexicalPostings, func() backend.Lexical { return postingsbm25.Engine{} }, postingsbm25.Dir},
		{LexicalBleve, func() backend.Lexical { return blevebm25.Engine{} }, blevebm25.Dir},
		// Opened through its location (remoteStore.writers), which names the cluster.
		{LexicalQdrant, nil, nil},
	}
}

// lexicalSpec returns the row of name as a manifest reads it (manifest.LexicalName).
func lexicalSpec(name string) (lexicalEngineSpec, bool) {
	name = manifest.LexicalName(name)
	for _, e := range lexicalEngines() {
		if e.name == name {
			return e, true
		}
	}
	return lexicalEngineSpec{}, false
}

// localLexicalNames lists the local engines, for messages.
func localLexicalNames() string {
	var names []string
	for _, e := range lexicalEngines() {
		if e.local != nil {
			names = append(names, e.name)
		}
	}
	return strings.Join(names, " or ")
}

// DefaultLexical is the lexical engine of a new local index whose build names none
// (manifest.DefaultLexical).
const DefaultLexical = manifest.DefaultLexical

// lexicalEngine returns the local engine a manifest's Lexical names (manifest.LexicalName).
func lexicalEngine(name string) (backend.Lexical, error) {
	e, ok := lexicalSpec(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("unknown lexical engine %q (want %s)", name, localLexicalNames())
	case e.local == nil:
		return nil, fmt.Errorf("lexical engine %q is not a local one (want %s; an index on Qdrant is named by its qdrant:// location)", name, localLexicalNames())
	}
	return e.local(), nil
}

// lexicalDir is the directory of a generation's lexical part for the engine named name (the
// generation itself for an engine that keeps no files there).
func lexicalDir(genDir, name string) string {
	if e, ok := lexicalSpec(name); ok && e.dir != nil {
		return e.dir(genDir)
	}
	return genDir
}

// newLexical is the engine a new build of a build option's Lexical uses: DefaultLexical for "".
func newLexical(name string) string {
	if name == "" {
		return DefaultLexical
	}
	return name
}

// useLexical records name as the lexical engine of the generation o writes and, unless the
// caller chose a non-local engine, picks the local engine of that name.
func (o *Options) useLexical(name string) error {
	o.Build.Lexical = name
	switch o.Engines.Lexical.(type) {
	case nil, blevebm25.Engine, postingsbm25.Engine: // a local default, chosen before the name was settled
		var err error
		o.Engines.Lexical, err = lexicalEngine(name)
		o.applyRAMBudget()
		return err
	}
	return nil
}

// hnswPath names the local vector engine's file of a generation in messages.
func hnswPath(genDir string) string { return hnswvec.Path(genDir) }

// adoptLexical makes an update continue in the lexical engine of the generation it derives
// from: the engine that wrote its files is the one that can extend them. Naming another is an
// error (rebuild to change engines).
func (o *Options) adoptLexical(base *Manifest) error {
	if o.Build.Lexical != "" && manifest.LexicalName(o.Build.Lexical) != manifest.LexicalName(base.Options.Lexical) {
		return fmt.Errorf("--lexical %s: the index uses the %s engine; rebuild it to change engines", o.Build.Lexical, manifest.LexicalName(base.Options.Lexical))
	}
	return o.useLexical(base.Options.Lexical)
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

// withDefaults fills the engines left nil: lexical names the lexical engine as a manifest does
// (manifest.LexicalName), params are the graph parameters of new graphs.
func (e Engines) withDefaults(lexical string, params hnsw.Options) (Engines, error) {
	if e.Passages == nil {
		e.Passages = kpst.Engine{}
	}
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
