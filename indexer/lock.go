package indexer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/indexer/manifest"
)

// ErrLocked is returned when another process is writing the index.
var ErrLocked = errors.New("the index is being written by another process")

// lockDir takes the writer lock of dir; the returned function releases it. The lock is an
// advisory flock on the index directory itself, not on a file in it: a file can be deleted by
// hand, after which a second writer would lock a new file of the same name and both would
// write. The kernel releases it when the process dies, so a crash never leaves the index
// locked. Holding the lock, it removes the unfinished generations (g-N.tmp) a killed writer
// left: no other writer can be using them.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := removeUnfinished(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: removing unfinished generations: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// removeUnfinished removes the g-N.tmp directories of dir.
func removeUnfinished(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if _, ok := manifest.ParseGeneration(strings.TrimSuffix(name, tmpSuffix)); ok && strings.HasSuffix(name, tmpSuffix) {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
		}
	}
	return errors.Join(errs...)
}
