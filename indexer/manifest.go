package indexer

import "github.com/kairos-rag/kairos/indexer/manifest"

// The manifest's format and the types it records belong to package indexer/manifest;
// indexer names those its callers use.
type (
	Manifest     = manifest.Manifest
	Input        = manifest.Input
	Counts       = manifest.Counts
	FileSum      = manifest.FileSum
	BuildOptions = manifest.BuildOptions
	DenseInfo    = manifest.DenseInfo
	BM25Stats    = manifest.BM25Stats
)

// FormatVersion is the version of the index directory layout and of the manifest
// (manifest.FormatVersion).
const FormatVersion = manifest.FormatVersion

// fileSHA256 hashes one file (manifest.SumFile).
func fileSHA256(path string) (FileSum, error) { return manifest.SumFile(path) }
