package indexer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockName is the file writers lock so that two builds, updates or compactions of one index
// never interleave their generations. Readers do not lock: they read committed generations.
const lockName = "LOCK"

// ErrLocked is returned when another process is writing the index.
var ErrLocked = errors.New("the index is being written by another process")

// lockDir takes the writer lock of dir; the returned function releases it. The lock is an
// advisory flock, released by the kernel when the process dies, so a crash never leaves the
// index locked.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
