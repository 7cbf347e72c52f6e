//go:build unix

package ivf

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the whole of f read-only. Searches read a few hundred scattered vectors of a
// chunk per query, so the kernel is told access is random: a fault reads one page, not a
// read-ahead window.
func mapFile(f *os.File, size int64, random bool) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	if random {
		_ = unix.Madvise(b, unix.MADV_RANDOM) // advice only: a failure changes speed, not results
	}
	return b, nil
}

func unmapFile(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}
