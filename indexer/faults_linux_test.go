package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// TestDiskFullTmpfs runs index, update and compact on a real tmpfs too small for them (root
// only: it mounts one). The write fails with "no space left on device" or, when the space
// suffices, succeeds; either way the live generation verifies and holds before or after.
func TestDiskFullTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection suite: not with -short")
	}
	probe := t.TempDir()
	if err := syscall.Mount("tmpfs", probe, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): disk full is covered by injected ENOSPC in TestFaultInjection", err)
	}
	syscall.Unmount(probe, 0)
	fx := faultFixture(t)
	starts := faultStarts(t, fx)
	runs, failed, lost := 0, 0, 0
	for _, op := range faultOps {
		if op.name != "index" && op.name != "update" && op.name != "compact" {
			continue
		}
		ctx := context.Background()
		before := livePassages(t, starts[op.start])
		clean := filepath.Join(t.TempDir(), "clean")
		copyTree(t, starts[op.start], clean)
		if err := op.run(ctx, clean, fx, nil); err != nil {
			t.Fatal(err)
		}
		after := livePassages(t, clean)
		start, end := dirSize(t, starts[op.start]), dirSize(t, clean)
		for _, frac := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
			mnt := t.TempDir()
			// tmpfs counts whole pages, and the copy's directories take some too.
			size := (start+int64(frac*float64(max(end-start, 1<<20))))/4096*4096 + 64<<10
			if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(mnt, "idx")
			copyTree(t, starts[op.start], dir)
			err := op.run(ctx, dir, fx, nil)
			runs++
			what := fmt.Sprintf("%s on a tmpfs of %d bytes (%.0f%% of the growth)", op.name, size, frac*100)
			if err != nil {
				failed++
				if !strings.Contains(err.Error(), "no space left on device") {
					t.Errorf("%s: %v, want no space left on device", what, err)
				}
			}
			if rep, verr := verifyIndex(ctx, dir); verr != nil || !rep.OK() {
				t.Errorf("%s: live generation does not verify: %v %v", what, verr, rep.Problems)
				lost++
			} else if got := livePassages(t, dir); !reflect.DeepEqual(got, before) && !reflect.DeepEqual(got, after) {
				t.Errorf("%s: live generation is neither before nor after", what)
				lost++
			}
			if err := syscall.Unmount(mnt, 0); err != nil {
				fds, _ := os.ReadDir("/proc/self/fd")
				for _, fd := range fds {
					l, _ := os.Readlink("/proc/self/fd/" + fd.Name())
					if strings.HasPrefix(l, mnt) {
						t.Logf("still open on the tmpfs: %s", l)
					}
				}
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	t.Logf("disk full on tmpfs: %d runs, %d failed with ENOSPC, %d with data lost", runs, failed, lost)
	if failed == 0 {
		t.Error("no run ran out of space: the sizes are wrong")
	}
}
