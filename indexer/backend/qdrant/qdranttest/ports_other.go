//go:build !unix

package qdranttest

import "os"

// portsLocked says whether lockPort's lock keeps a port from other processes: this system
// has no flock, so two test processes may pick one port (the CI machines run Linux).
const portsLocked = false

// tryLock takes no lock here.
func tryLock(*os.File) (bool, error) { return true, nil }
