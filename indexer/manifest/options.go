package manifest

import (
	"flag"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"

	"github.com/kairos-rag/kairos/corpus"
)

// Defaults of BuildOptions, exported so that command-line flags show the values a build
// applies instead of retyping them.
const (
	// DefaultMaxWords is BuildOptions.MaxWords's default: the splitter's.
	DefaultMaxWords = corpus.DefaultMaxWords
	// DefaultBatchSize is BuildOptions.BatchSize's default.
	DefaultBatchSize = 5000
)

// Analyzer is the default analyzer, of indexes in English and of manifests that record none:
// bleve's English analyzer: unicode tokens, possessives, lower case, English stop words,
// Porter stemming (the original Porter algorithm, bleve's analysis/token/porter; bleve's
// Snowball English stemmer is a separate filter this analyzer does not use). Other languages
// get theirs from internal/langanalysis (BuildOptions.Language).
const Analyzer = en.AnalyzerName

// Lexical engines a manifest may name (BuildOptions.Lexical); a local build names one of
// the first two. Package indexer's engine table maps them to the engines.
const (
	LexicalBleve    = "bleve"    // bleve's scorch index ("" in manifests older than the postings default)
	LexicalPostings = "postings" // Kairos's postings with block-max MaxScore
	LexicalQdrant   = "qdrant"   // an index on Qdrant: its BM25 lives in the cluster
)

// DefaultLexical is the lexical engine of a new local index whose build names none
// (BuildOptions.Lexical ""): the one definition of that default, which `kairos index`,
// `make run` and `kairos bench scale` inherit. A build records it in the manifest; an update,
// compaction or resumed build keeps the engine its base records instead.
const DefaultLexical = LexicalPostings

// LexicalName is the engine a manifest's BuildOptions.Lexical names: "" is bleve, the only
// engine of the indexes written before the field existed, and the default until postings
// replaced it, so those indexes keep opening with the engine that wrote them.
func LexicalName(name string) string {
	if name == "" {
		return LexicalBleve
	}
	return name
}

// LexicalEngine names the lexical engine of the generation m describes: LexicalPostings,
// LexicalBleve (also for manifests that name none) or LexicalQdrant.
func (m *Manifest) LexicalEngine() string { return LexicalName(m.Options.Lexical) }

// BuildOptions are the settings of a build that shape the index; they are recorded in the
// manifest.
type BuildOptions struct {
	// MaxWords is the passage size limit, title prefix included. Default 120.
	MaxWords int `json:"max_words"`
	// BatchSize is the number of passages per bleve batch. Default 5000: bleve analyses a
	// batch in parallel, and larger batches make fewer, larger segments.
	BatchSize int `json:"batch_size"`
	// Language is the language the passages are analysed as (indexer/language.go): set, it
	// is forced; empty, the build detects it from its inputs; langanalysis.Multilingual
	// analyses each document in its own language (its "language" field, else its input's).
	Language string `json:"language,omitempty"`
	// Analyzer is the text analyzer of Language, set by the build (internal/langanalysis).
	Analyzer string `json:"analyzer"`
	// Lexical names the lexical engine: LexicalPostings or LexicalBleve. Empty, a new build
	// uses DefaultLexical and records it; an update, compaction or resumed build keeps the
	// engine of the generation it derives from. In a manifest, "" (older indexes) reads as
	// LexicalBleve.
	Lexical string `json:"lexical,omitempty"`
	// Qdrant records the collection settings of an index on Qdrant (nil for a local one), so
	// that updates make their collections alike.
	Qdrant *QdrantBuild `json:"qdrant,omitempty"`
}

// QdrantBuild are the settings of the collections of an index on Qdrant: shards and
// replication as asked (0: the engine's default) and the BM25 parameters baked into them.
type QdrantBuild struct {
	Shards      uint32  `json:"shards,omitempty"`
	Replication uint32  `json:"replication,omitempty"`
	K1          float64 `json:"k1"`
	B           float64 `json:"b"`
}

// SetDefaults fills the zero fields with the defaults a build applies (DefaultMaxWords,
// DefaultBatchSize) and sets the analyzer. Flags calls it on a copy to show them, so that a
// default is written only here.
func (o *BuildOptions) SetDefaults() {
	if o.MaxWords == 0 {
		o.MaxWords = DefaultMaxWords
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	o.Analyzer = Analyzer
}

// Flags registers the build options with their defaults: --max-words, --batch, --lexical
// and --language.
func (o *BuildOptions) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	fs.IntVar(&o.MaxWords, "max-words", d.MaxWords, "passage size limit in words, title prefix included")
	fs.IntVar(&o.BatchSize, "batch", d.BatchSize, "passages per index batch")
	fs.StringVar(&o.Lexical, "lexical", o.Lexical, "lexical engine of a new index: postings (Kairos's own: same scores, pruned queries, bounded build memory) or bleve; default "+DefaultLexical+"; an update keeps the index's")
	fs.StringVar(&o.Language, "language", o.Language, "analyse the passages as this language (a Wikipedia code: bg, de, ru, ...; one without an analyzer gets Unicode words without stemming; multilingual: each document in its own language); default: detected from the inputs (MediaWiki <siteinfo>, Enterprise in_language), else en; inputs in different languages make a multilingual index")
}
