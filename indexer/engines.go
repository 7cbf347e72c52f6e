package indexer

import (
	"fmt"

	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
)

// Engines are the engines of the passage, lexical and vector parts of a generation (see
// indexer/backend). The index's store hands a writer its own (store.Store.Engines): locally
// the passage store (kpst), the lexical engine BuildOptions.Lexical names (Kairos's own
// postings, the default of a new index, or bleve; the manifest records it, so readers and
// updates use the engine that wrote the generation) and the HNSW graph (hnswvec); on Qdrant
// the cluster's. Options.Engines replaces those it sets. The driver numbers the passages;
// every part keys them the same way.
type Engines = store.Engines

// Lexical engines a manifest may name (BuildOptions.Lexical); a local build names one of
// the first two. The names are recorded values, defined with the manifest.
const (
	LexicalBleve    = manifest.LexicalBleve
	LexicalPostings = manifest.LexicalPostings
	LexicalQdrant   = manifest.LexicalQdrant
)

// DefaultLexical is the lexical engine of a new local index whose build names none
// (manifest.DefaultLexical).
const DefaultLexical = manifest.DefaultLexical

// adoptLexical makes an update continue in the lexical engine of the generation it derives
// from: the engine that wrote its files is the one that can extend them. Naming another is an
// error (rebuild to change engines).
func (o *Options) adoptLexical(base *Manifest) error {
	if o.Build.Lexical != "" && manifest.LexicalName(o.Build.Lexical) != manifest.LexicalName(base.Options.Lexical) {
		return fmt.Errorf("--lexical %s: the index uses the %s engine; rebuild it to change engines", o.Build.Lexical, manifest.LexicalName(base.Options.Lexical))
	}
	o.Build.Lexical = base.Options.Lexical
	return nil
}

// Kinds of dense index a manifest may name (Options.VectorIndex): the recorded values,
// defined with the manifest.
const (
	VectorIndexHNSW = manifest.VectorIndexHNSW
	VectorIndexIVF  = manifest.VectorIndexIVF
)

// adoptVectorIndex makes a writer derived from base (an update, a compaction, the embedding
// half going on from its checkpoint) continue in the kind of dense index base has: the engine
// that wrote its files is the one that can extend them. Naming another is an error (rebuild to
// change it).
func (o *Options) adoptVectorIndex(base *Manifest) error {
	if base == nil || base.Dense == nil {
		return nil
	}
	kind := base.Dense.IndexKind()
	if o.VectorIndex != "" && o.VectorIndex != kind {
		return fmt.Errorf("--vector-index %s: the index's vectors are in %s; rebuild it (kairos index --force --vector-index %s) to change that", o.VectorIndex, kind, o.VectorIndex)
	}
	return nil
}
