package indexer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// An index directory holds generations and a pointer to the live one:
//
//	DIR/CURRENT        one line: the name of the live generation ("g-000003")
//	DIR/g-000003/      manifest.json, passages-*.kpst, bm25/ (bleve), dense.hnsw, ...
//	DIR/g-000004.tmp/  a build in progress (ignored by readers, removed by the next build)
//
// A build writes a new generation beside the live one, syncs it, then replaces CURRENT by
// rename. Readers resolve CURRENT once and then only read that generation, so they always see
// a complete commit, and a crash at any point leaves the previous generation live.
// The files' formats and the generation names belong to package indexer/manifest.
const tmpSuffix = ".tmp"

// ErrNoIndex is returned when a directory holds no committed index (manifest.ErrNoIndex).
var ErrNoIndex = manifest.ErrNoIndex

// GenerationName is the name of generation n ("g-000003"): its directory in a local index,
// the suffix of its collection on Qdrant (manifest.GenerationName).
func GenerationName(n int) string { return manifest.GenerationName(n) }

// Current returns the path of the live generation of the index at dir (manifest.Current).
func Current(dir string) (string, error) { return manifest.Current(dir) }

// nextGen returns the number for a new generation: one past the highest on disk.
func nextGen(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	max := 0
	for _, e := range entries {
		if n, ok := manifest.ParseGeneration(strings.TrimSuffix(e.Name(), tmpSuffix)); ok && n > max {
			max = n
		}
	}
	return max + 1, nil
}

// commitGen makes tmpDir (a finished, synced generation) live: rename it to its final name,
// then point CURRENT at it. at marks the commit points (Options.at).
func commitGen(dir, tmpDir string, gen int, at func(string) error) error {
	final := filepath.Join(dir, manifest.GenerationName(gen))
	if err := os.Rename(tmpDir, final); err != nil {
		return err
	}
	if err := at("gen-renamed"); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return err
	}
	if err := at("dir-synced"); err != nil {
		return err
	}
	if err := manifest.WriteCurrent(dir, gen); err != nil {
		return err
	}
	return at("current-written")
}

// cleanOld removes unfinished builds and every generation other than live, prev (the one
// live before this commit, kept so that a server that has not reloaded yet keeps reading files
// that exist) and the checkpoint generation, if any. Errors are returned but leave the index
// usable.
func cleanOld(dir string, live, prev int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	keep := map[int]bool{live: true, prev: true}
	if cp, err := manifest.ReadCheckpoint(dir); err == nil && cp != nil {
		if n, ok := manifest.ParseGeneration(cp.Generation); ok {
			keep[n] = true
		}
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, tmpSuffix) {
			if _, ok := manifest.ParseGeneration(strings.TrimSuffix(name, tmpSuffix)); ok {
				errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
			}
			continue
		}
		if n, ok := manifest.ParseGeneration(name); ok && !keep[n] {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
		}
	}
	return errors.Join(errs...)
}

// liveGen returns the number of the live generation, 0 when there is none.
func liveGen(dir string) int {
	cur, err := Current(dir)
	if err != nil {
		return 0
	}
	n, _ := manifest.ParseGeneration(filepath.Base(cur))
	return n
}

// syncTree fsyncs every file and directory under root, so a rename after it publishes data
// that is on disk.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}
