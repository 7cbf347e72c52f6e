//go:build !unix

package qdranttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// portsLocked says whether lockPort's lock keeps a port from other processes.
const portsLocked = false

// lockPort opens the port's lock file without locking it: this system has no flock, so two
// test processes may pick one port (the CI machines run Linux).
func lockPort(dir string, port int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("port lock: %w", err)
	}
	return f, nil
}
