// Package childrss measures child processes the benchmarks start (kairos bench scale's builds
// and anchor engines, kairos bench ann's engines): each one's peak resident memory, from the
// rusage of the waited-for child, and its resident memory now, from /proc. A child's peak is
// its own only after ResetPeak: Go starts a child sharing this process's memory until it execs
// (vfork), and Linux folds that memory's peak into the child's, so without the reset every child
// measured after this process had queried an index (its files mapped) reported at least this
// process's peak so far: a 10M build reported the 1.8 GB bench scale had reached querying the
// 1M index and its anchor. Even after the reset a child's peak includes what this process holds
// when the child starts, so a benchmark frees its large inputs before it starts one. A child
// started here is killed when this process dies (on Linux; see EndWithParent).
package childrss

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Run runs cmd and returns its peak resident memory in bytes (see the package comment).
func Run(cmd *exec.Cmd) (peakRSS int64, err error) {
	if err := Start(cmd); err != nil {
		return 0, err
	}
	return Wait(cmd)
}

// Start resets this process's peak resident memory and starts cmd, which ends with this
// process (EndWithParent).
func Start(cmd *exec.Cmd) error {
	if err := ResetPeak(); err != nil {
		return err
	}
	EndWithParent(cmd)
	return cmd.Start()
}

// Wait waits for cmd, started by Start, and returns its peak resident memory in bytes (0 when
// it was not measured), with cmd.Wait's error.
func Wait(cmd *exec.Cmd) (peakRSS int64, err error) {
	err = cmd.Wait()
	return Peak(cmd.ProcessState), err
}

// Peak is the peak resident memory in bytes of an exited child (its ru_maxrss), 0 where the
// system does not say.
func Peak(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	return maxRSS(ps.SysUsage())
}

// CPUSeconds is the user and system time of an exited child.
func CPUSeconds(ps *os.ProcessState) float64 {
	if ps == nil {
		return 0
	}
	return (ps.UserTime() + ps.SystemTime()).Seconds()
}

// ResetPeak sets this process's peak resident memory back to its current size ("5" into
// /proc/self/clear_refs, Linux 4.0 and later).
func ResetPeak() error {
	if runtime.GOOS != "linux" {
		return nil
	}
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// Status returns the resident memory (VmRSS) and its peak (VmHWM) of process pid, in bytes;
// pid 0 is this process.
func Status(pid int) (rss, hwm int64, err error) {
	name := "/proc/self/status"
	if pid != 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	f, err := os.Open(name)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || key != "VmRSS" && key != "VmHWM" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", name, sc.Text(), err)
		}
		if key == "VmRSS" {
			rss = kb * 1024
		} else {
			hwm = kb * 1024
		}
	}
	return rss, hwm, sc.Err()
}

// CPUTime returns the user and system CPU seconds process pid has used so far (Linux's
// /proc/PID/stat, in clock ticks of 1/100 s: the kernel's USER_HZ on every Linux platform).
func CPUTime(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces: count from after it.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return float64(utime+stime) / 100, nil
}
