//go:build unix

package ivf

import (
	"os"
	"unsafe"

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

// adviseWillNeed asks the kernel to read the pages of b, a view of a file mapping, without
// waiting for them: the reads of many such calls go to the disk together.
func adviseWillNeed(b []byte) {
	if len(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := p &^ uintptr(os.Getpagesize()-1)
	// madvise takes whole pages from a page boundary; start lies in b's own mapping, which
	// the garbage collector does not manage, so the address is passed as a number.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, p-start+uintptr(len(b)), unix.MADV_WILLNEED) // advice only
}
