//go:build unix

package kpst

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps the file at path read-only. The pages are the kernel's page cache: they are
// read as records are decoded and can be dropped again under memory pressure, so a store of
// millions of passages costs address space, not heap. unmap releases the mapping; no view
// into data may be used after it. release drops pages of data from the process (see
// releasePages); it does nothing when the file was read into memory instead of mapped.
func mapFile(path string) (data []byte, unmap func() error, release func([]byte), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	size := fi.Size()
	if size == 0 || size != int64(int(size)) {
		// Nothing to map (the envelope check reports it), or too large for this platform.
		b, err := os.ReadFile(path)
		return b, func() error { return nil }, func([]byte) {}, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return data, func() error { return syscall.Munmap(data) }, releasePages, nil
}

// releasePages drops the pages of b, a part of a shared read-only file mapping, from the
// process (MADV_DONTNEED): a later read faults them back from the page cache or the file, so
// views into them stay valid. A walk of the whole store (Each) would otherwise keep every page
// it read resident until the kernel reclaims them, and the resident memory of a build that
// embeds a stored collection grew with the collection's text (658,444 kB of a 2M-passage
// store resident with 0.86M of its passages embedded).
func releasePages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED) // advice: a failure only costs memory
	}
}
