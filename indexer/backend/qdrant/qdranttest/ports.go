package qdranttest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// portReservations are the loopback ports a cluster's peers listen on, each held by an
// exclusive lock on a file named after it in a directory every test process of the machine
// shares. A port is picked at random below the kernel's ephemeral range, where nothing that
// listens on port 0 or dials out is handed it; the lock keeps it from every other cluster
// (of this or another test binary: make test runs packages in parallel) from the moment it
// is picked, through its peer's start and restarts, until the cluster stops. A free port
// alone was not enough: two clusters could pick the same one before either peer bound it,
// and Qdrant, refused its REST port, logs it and runs on.
type portReservations struct {
	locks []*os.File
}

// portLockDir is the directory of the lock files.
func portLockDir() string { return filepath.Join(os.TempDir(), "kairos-qdranttest-ports") }

// reserve picks and locks n distinct ports. Where the range below the ephemeral one leaves
// no room, it falls back to ports from a listen on port 0, unlocked.
func (r *portReservations) reserve(n int) ([]int, error) {
	lo := ephemeralLow()
	const first = 10000
	if lo-first < 1000 {
		return ephemeralPorts(n)
	}
	dir := portLockDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("port locks: %w", err)
	}
	seen := map[int]bool{}
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("no %d free loopback ports in %d..%d", n, first, lo-1)
		}
		port := first + rand.IntN(lo-first)
		if seen[port] {
			continue
		}
		seen[port] = true
		f, err := lockPort(dir, port)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue // another cluster holds it
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			f.Close() // in use by something that takes no lock
			continue
		}
		l.Close()
		r.locks = append(r.locks, f)
		out = append(out, port)
	}
	return out, nil
}

// lockPort takes the port's lock without waiting (tryLock): nil, nil when another process
// holds it.
func lockPort(dir string, port int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("port lock: %w", err)
	}
	held, err := tryLock(f)
	if !held || err != nil {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("port lock %s: %w", f.Name(), err)
		}
		return nil, nil
	}
	return f, nil
}

// release unlocks every port; the peers must have stopped.
func (r *portReservations) release() {
	for _, f := range r.locks {
		f.Close()
	}
	r.locks = nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux), 32768 when it
// cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo <= 0 || lo > 65535 {
		return 32768
	}
	return lo
}

// ephemeralPorts reserves n distinct loopback ports by listening on port 0, then releases
// them for the server.
func ephemeralPorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
