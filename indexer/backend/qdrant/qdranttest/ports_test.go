package qdranttest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPortReservationsDisjoint: two reservations never share a port, even in one process,
// and a released port can be locked again.
func TestPortReservationsDisjoint(t *testing.T) {
	var a, b portReservations
	pa, err := a.reserve(200)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.locks) == 0 || !portsLocked {
		t.Skip("ports are not locked here: the ephemeral range leaves no room below it, or the system has no flock")
	}
	pb, err := b.reserve(200)
	if err != nil {
		t.Fatal(err)
	}
	defer b.release()
	held := map[int]bool{}
	for _, p := range pa {
		if held[p] {
			t.Fatalf("port %d reserved twice by one reservation", p)
		}
		held[p] = true
	}
	for _, p := range pb {
		if held[p] {
			t.Fatalf("port %d reserved by both", p)
		}
	}
	if f, err := lockPort(portLockDir(), pa[0]); err != nil || f != nil {
		t.Fatalf("lock of a reserved port: %v, %v; want refused", f, err)
	}
	a.release()
	f, err := lockPort(portLockDir(), pa[0])
	if err != nil || f == nil {
		t.Fatalf("lock of a released port: %v, %v", f, err)
	}
	f.Close()
}

// TestPeerOnTakenPortFailsFast: a peer whose REST port something else holds fails its wait
// at once, saying so, instead of polling whatever answers there until the startup timeout.
func TestPeerOnTakenPortFailsFast(t *testing.T) {
	bin, ok := Binary()
	if !ok {
		t.Skip("qdrant server binary absent: run `make qdrant` (or set KAIROS_QDRANT_BIN)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &Cluster{t: t, bin: bin}
	t.Cleanup(c.stopAll)
	ports, err := c.ports.reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	p := &Peer{HTTP: l.Addr().(*net.TCPAddr).Port, GRPC: ports[0], P2P: ports[1], Dir: filepath.Join(t.TempDir(), "peer0")}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.Peers = append(c.Peers, p)
	if err := c.spawn(0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = c.waitReady(0, 1, StartupTimeout)
	if err == nil || !strings.Contains(err.Error(), "could not bind") || !strings.Contains(err.Error(), "http "+strconv.Itoa(p.HTTP)) {
		t.Fatalf("wait: %v; want the port named", err)
	}
	if took := time.Since(start); took > StartupTimeout/2 {
		t.Fatalf("failed after %v", took)
	}
}
