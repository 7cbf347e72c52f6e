package childrss

import (
	"os/exec"
	"syscall"
)

// EndWithParent has the kernel send cmd SIGKILL when the thread that starts it exits
// (PR_SET_PDEATHSIG), so a child outlives neither a test binary nor a benchmark that is killed
// before its cleanup runs: a Qdrant peer of a killed `go test` otherwise served on for hours.
// The signal follows the starting OS thread, not the process. Go's runtime keeps its threads
// until the process exits, except one whose goroutine exits locked to it, so StartOnCPU's
// locked thread waits for its child to exit before it ends.
func EndWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
