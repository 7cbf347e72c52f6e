//go:build !unix

package ivf

import (
	"io"
	"os"
)

// mapFile reads f into memory where there is no mmap.
func mapFile(f *os.File, size int64, random bool) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

func unmapFile(b []byte) error { return nil }

// adviseWillNeed does nothing where the files are read into memory.
func adviseWillNeed([]byte) {}
