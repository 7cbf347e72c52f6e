//go:build unix

package hnsw

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only. The kernel is told access is random, so a page fault
// reads one page and not a read-ahead window of the vectors around it.
func mapFile(f *os.File, size int64) ([]byte, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(b, unix.MADV_RANDOM) // advice only: a failure changes speed, not results
	return b, nil
}

func unmapFile(b []byte) error { return unix.Munmap(b) }

const canMap = true
