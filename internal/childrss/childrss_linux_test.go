package childrss

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestChildPeakRSSIsTheChilds: after this process has touched 256 MB and let them go, a child
// that needs a few MB reports a few MB, not this process's peak (which a child started
// without the reset inherits: see the package comment).
func TestChildPeakRSSIsTheChilds(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	const size = 256 << 20
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if err := syscall.Munmap(b); err != nil {
		t.Fatal(err)
	}
	peak, err := Run(exec.Command(truePath))
	if err != nil {
		t.Fatal(err)
	}
	if peak <= 0 || peak >= size/2 {
		t.Fatalf("true(1) peaked at %d MB; this process had reached %d MB before it started", peak>>20, size>>20)
	}
}
