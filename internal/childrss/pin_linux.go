package childrss

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// StartOnCPU starts cmd as Start does, confined to one CPU: every thread the child and its
// libraries create (OpenMP, tokio, a Go runtime's) inherits the affinity of the thread that
// forked it, so a child "on one thread" cannot spread its work over more cores whatever its
// thread pools do. The fork runs on a locked thread whose affinity is set for it. That thread
// is never unlocked, so no other goroutine runs on one CPU, and its goroutine waits for the
// child to exit before it exits with it: the child's parent-death signal (EndWithParent)
// follows the thread that started it, and would kill the child as soon as the thread ended.
func StartOnCPU(cmd *exec.Cmd, cpu int) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- fmt.Errorf("confining a child to CPU %d: %w", cpu, err)
			return
		}
		err := Start(cmd)
		errc <- err
		if err == nil {
			waitExit(cmd.Process.Pid)
		}
	}()
	return <-errc
}

// waitExit returns once process pid has exited, without reaping it (cmd.Wait still does).
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// LastCPU is the highest-numbered CPU this process may run on: the one StartOnCPU is given
// by the benchmarks (-1 when the affinity cannot be read).
func LastCPU() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return -1
	}
	for cpu := 1023; cpu >= 0; cpu-- {
		if set.IsSet(cpu) {
			return cpu
		}
	}
	return -1
}

// CPUs is the number of CPUs process pid may run on (0 when it cannot be read).
func CPUs(pid int) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return 0
	}
	return set.Count()
}
