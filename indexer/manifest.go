package indexer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// The manifest's format and the types it records belong to package indexer/manifest;
// indexer names them for its callers.
type (
	Manifest     = manifest.Manifest
	Input        = manifest.Input
	Counts       = manifest.Counts
	FileSum      = manifest.FileSum
	Segment      = manifest.Segment
	BuildOptions = manifest.BuildOptions
	QdrantBuild  = manifest.QdrantBuild
	DenseInfo    = manifest.DenseInfo
	BM25Stats    = manifest.BM25Stats
)

// FormatVersion is the version of the index directory layout and of the manifest
// (manifest.FormatVersion).
const FormatVersion = manifest.FormatVersion

// ReadManifest reads and checks the manifest of one generation directory (manifest.Read).
func ReadManifest(genDir string) (*Manifest, error) { return manifest.Read(genDir) }

// fileSHA256 hashes one file.
func fileSHA256(path string) (FileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileSum{}, err
	}
	return FileSum{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// sumTree hashes every regular file under root, keyed by slash path relative to base.
func sumTree(base, root string, into map[string]FileSum) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return errors.New("unexpected non-regular file " + path)
		}
		sum, err := fileSHA256(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, path)
		if err != nil {
			return err
		}
		into[filepath.ToSlash(rel)] = sum
		return nil
	})
}
