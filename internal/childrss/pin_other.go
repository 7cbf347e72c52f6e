//go:build !linux

package childrss

import "os/exec"

// StartOnCPU starts cmd as Start does: outside Linux a child is not confined to one CPU.
func StartOnCPU(cmd *exec.Cmd, cpu int) error { return Start(cmd) }

// LastCPU is -1 outside Linux: no CPU to confine a child to.
func LastCPU() int { return -1 }

// CPUs is 0 outside Linux: not measured.
func CPUs(pid int) int { return 0 }
