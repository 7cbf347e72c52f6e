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
// releasePages) and readAhead switches the kernel's read-ahead on for a walk and off again (see
// readAhead); both do nothing when the file was read into memory instead of mapped.
//
// The mapping is advised random: a search reads a record or two a hit, and without the advice
// a page missing from the cache is read with the device's read-ahead window around it (8 MiB
// on the build machine: ten hits read 80 MB, and a 10M index served in a 4 GB memory cgroup
// answered 14 dense queries a second). Each, the one sequential reader, switches it back for
// its walk.
func mapFile(path string) (data []byte, unmap func() error, release func([]byte), readahead func([]byte, bool), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	size := fi.Size()
	if size == 0 || size != int64(int(size)) {
		// Nothing to map (the envelope check reports it), or too large for this platform.
		b, err := os.ReadFile(path)
		return b, func() error { return nil }, func([]byte) {}, func([]byte, bool) {}, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	_ = unix.Madvise(data, unix.MADV_RANDOM) // advice: a failure changes speed, not results
	return data, func() error { return syscall.Munmap(data) }, releasePages, readAhead, nil
}

// readAhead advises the pages of b, a shared read-only file mapping, sequential (on: a walk
// reads them in order, and the kernel reads well ahead of it) or random again (off).
func readAhead(b []byte, on bool) {
	if len(b) == 0 {
		return
	}
	advice := unix.MADV_RANDOM
	if on {
		advice = unix.MADV_SEQUENTIAL
	}
	_ = unix.Madvise(b, advice) // advice: a failure changes speed, not results
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
