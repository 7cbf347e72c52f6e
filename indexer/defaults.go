package indexer

import "github.com/kairos-rag/kairos/indexer/manifest"

// Defaults of the build options, exported so that command-line flags show the values the
// library applies instead of retyping them (Options' own are beside it, options.go).
const (
	// DefaultMaxWords is BuildOptions.MaxWords's default (manifest.DefaultMaxWords).
	DefaultMaxWords = manifest.DefaultMaxWords
	// DefaultBatchSize is BuildOptions.BatchSize's default (manifest.DefaultBatchSize).
	DefaultBatchSize = manifest.DefaultBatchSize
	// DefaultHNSWSeed is the seed of Options.HNSW when it is zero, so that a build with one
	// worker is reproducible without asking for it.
	DefaultHNSWSeed = 1
)
