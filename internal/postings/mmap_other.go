//go:build !unix

package postings

import (
	"io"
	"os"
)

// mapFile reads f into memory where mmap is not available.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// releasePages does nothing where segments are read into memory.
func releasePages([]byte) {}
