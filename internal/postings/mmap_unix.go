//go:build unix

package postings

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps f read-only. The pages are read on demand by the kernel and can be evicted,
// so a segment larger than memory can be searched.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%d bytes do not fit in the address space", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}

// releasePages drops the pages of a mapping from the process (MADV_DONTNEED): a later read
// faults them back from the page cache, or from the file. A merge that streams through
// segments larger than memory would otherwise keep every page it read resident until the
// kernel reclaims them, and its RSS would grow with the index.
func releasePages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED) // advice: a failure only costs memory
	}
}
