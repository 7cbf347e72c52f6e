package scalebench

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// runMeasured runs cmd and returns its peak resident memory (getrusage of the waited-for
// child), which is the child's own only after resetPeakRSS: Go starts a child sharing this
// process's memory until it execs (vfork), and Linux folds that memory's peak into the
// child's, so without the reset every child measured after this process had queried an index
// (its files mapped) reported at least this process's peak so far: a 10M build reported the
// 1.8 GB this process had reached querying the 1M index and its anchor.
func runMeasured(cmd *exec.Cmd) (peakRSS int64, err error) {
	if err := resetPeakRSS(); err != nil {
		return 0, err
	}
	err = cmd.Run()
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
		}
	}
	return peakRSS, err
}

// resetPeakRSS sets this process's peak resident memory back to its current size ("5" into
// /proc/self/clear_refs, Linux 4.0 and later).
func resetPeakRSS() error {
	if runtime.GOOS != "linux" {
		return nil
	}
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
