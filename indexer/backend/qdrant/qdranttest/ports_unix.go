//go:build unix

package qdranttest

import (
	"errors"
	"os"
	"syscall"
)

// portsLocked says whether lockPort's lock keeps a port from other processes.
const portsLocked = true

// tryLock takes f's exclusive lock without waiting: false when another process holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
