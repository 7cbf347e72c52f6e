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

// releasePages drops the pages of b, a part of a shared read-only file mapping, from the
// process (MADV_DONTNEED); a later read faults them back from the page cache or the file.
func releasePages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED) // advice: a failure only costs memory
	}
}

const canMap = true
