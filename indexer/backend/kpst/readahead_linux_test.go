package kpst

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cachedPages returns how many pages of the mapping b are in the page cache (mincore).
func cachedPages(t *testing.T, b []byte) int {
	t.Helper()
	ps := os.Getpagesize()
	vec := make([]byte, (len(b)+ps-1)/ps)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestGetReadsLittle: a lookup by key reads the pages of its record and offset, not the
// device's read-ahead window around them (at least 128 KiB by default, 8 MiB on some
// machines: ten hits of a search would read 80 MB of a store that does not fit in memory).
func TestGetReadsLittle(t *testing.T) {
	const n = 4000
	text := strings.Repeat("passage text ", 160) // about 2 KB a record, an 8 MB store
	path := writeTextStore(t, n, func(i int) string { return strconv.Itoa(i) + text })
	s, err := openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := s.segs[0].data
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Out of the process, then out of the page cache (written and synced, its pages are clean).
	s.segs[0].release(data)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if c := cachedPages(t, data); c > len(data)/os.Getpagesize()/10 {
		t.Skipf("the page cache kept %d pages of the store after FADV_DONTNEED: cannot observe reads here", c)
	}
	p, err := s.Get(t.Context(), n/2)
	if want := strconv.Itoa(n/2) + text; err != nil || p.Text != want {
		t.Fatalf("Get(%d) = %.20q, %v", n/2, p.Text, err)
	}
	if c := cachedPages(t, data); c > 8 {
		t.Errorf("one Get left %d pages of the store in the page cache (%d KiB): want its record's and offset's few", c, c*os.Getpagesize()>>10)
	}
}
