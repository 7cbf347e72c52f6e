//go:build unix

package kpst

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the file at path read-only. The pages are the kernel's page cache: they are
// read as records are decoded and can be dropped again under memory pressure, so a store of
// millions of passages costs address space, not heap. unmap releases the mapping; no view
// into data may be used after it.
func mapFile(path string) (data []byte, unmap func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 || size != int64(int(size)) {
		// Nothing to map (the envelope check reports it), or too large for this platform.
		b, err := os.ReadFile(path)
		return b, func() error { return nil }, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
