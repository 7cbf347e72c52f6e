//go:build !linux

package childrss

import "os/exec"

// EndWithParent does nothing outside Linux, which has no parent-death signal: a child started
// there outlives a parent killed before its cleanup.
func EndWithParent(cmd *exec.Cmd) {}
