// Package qdranttest runs a real Qdrant cluster for tests: N peers as child processes of the
// test binary, every port on 127.0.0.1, storage in the test's temp directory, telemetry off,
// stopped by PID when the test ends, and killed with the test binary should it be killed
// first. The server is the binary `make qdrant` fetches (pinned by npm integrity and sha256);
// tests that need it skip only when it is absent.
package qdranttest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/internal/childrss"
)

// Version is the Qdrant release `make qdrant` fetches.
const Version = "1.16.3"

// Binary returns the qdrant server binary: $KAIROS_QDRANT_BIN, or the one `make qdrant` puts
// under ~/.cache/kairos. ok is false when there is none.
func Binary() (path string, ok bool) {
	if p := os.Getenv("KAIROS_QDRANT_BIN"); p != "" {
		_, err := os.Stat(p)
		return p, err == nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false
	}
	p := filepath.Join(home, ".cache", "kairos", "qdrant-"+Version, "qdrant")
	_, err = os.Stat(p)
	return p, err == nil
}

// Peer is one qdrant process of a cluster.
type Peer struct {
	HTTP, GRPC, P2P int    // loopback ports
	Dir             string // storage and working directory
	cmd             *exec.Cmd
	done            chan struct{}
}

// HTTPAddr is the peer's REST address, host:port.
func (p *Peer) HTTPAddr() string { return "127.0.0.1:" + strconv.Itoa(p.HTTP) }

// GRPCAddr is the peer's gRPC address, host:port.
func (p *Peer) GRPCAddr() string { return "127.0.0.1:" + strconv.Itoa(p.GRPC) }

// Cluster is a running cluster. Its methods are for the test goroutine.
type Cluster struct {
	t     testing.TB
	bin   string
	Peers []*Peer
}

// StartupTimeout bounds how long Start waits for the cluster to form.
const StartupTimeout = 60 * time.Second

// RestartTimeout bounds how long Restart waits for a restarted peer: it is ready only once
// its shards have caught up, by transfers that a loaded machine slows down (CI's 2 cores
// took more than StartupTimeout once).
const RestartTimeout = 3 * time.Minute

// Start starts a cluster of n peers and waits until every peer is ready and sees all n peers.
// It skips the test when the qdrant binary is absent, and stops the peers in t.Cleanup.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		t.Skip("qdrant server binary absent: run `make qdrant` (or set KAIROS_QDRANT_BIN)")
	}
	// The directory first: cleanups run last-in first-out, so the peers stop before their
	// storage is removed.
	root := t.TempDir()
	c := &Cluster{t: t, bin: bin}
	t.Cleanup(c.stopAll)
	for i := 0; i < n; i++ {
		ports, err := freePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		p := &Peer{HTTP: ports[0], GRPC: ports[1], P2P: ports[2], Dir: filepath.Join(root, "peer"+strconv.Itoa(i))}
		if err := os.MkdirAll(p.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c.Peers = append(c.Peers, p)
		if err := c.spawn(i); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // the others bootstrap from peer 0, which must be listening first
			if err := c.waitReady(0, 1, StartupTimeout); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range c.Peers {
		if err := c.waitReady(i, n, StartupTimeout); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Addrs returns every peer's gRPC address.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Peers))
	for i, p := range c.Peers {
		out[i] = p.GRPCAddr()
	}
	return out
}

func (c *Cluster) spawn(i int) error {
	p := c.Peers[i]
	args := []string{"--disable-telemetry"}
	if i == 0 {
		args = append(args, "--uri", "http://127.0.0.1:"+strconv.Itoa(p.P2P))
	} else {
		args = append(args, "--uri", "http://127.0.0.1:"+strconv.Itoa(p.P2P),
			"--bootstrap", "http://127.0.0.1:"+strconv.Itoa(c.Peers[0].P2P))
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(),
		"QDRANT__SERVICE__HOST=127.0.0.1",
		"QDRANT__SERVICE__HTTP_PORT="+strconv.Itoa(p.HTTP),
		"QDRANT__SERVICE__GRPC_PORT="+strconv.Itoa(p.GRPC),
		"QDRANT__CLUSTER__ENABLED=true",
		"QDRANT__CLUSTER__P2P__PORT="+strconv.Itoa(p.P2P),
		"QDRANT__STORAGE__STORAGE_PATH="+filepath.Join(p.Dir, "storage"),
		"QDRANT__STORAGE__SNAPSHOTS_PATH="+filepath.Join(p.Dir, "snapshots"),
		"QDRANT__LOG_LEVEL=WARN",
	)
	log, err := os.OpenFile(filepath.Join(p.Dir, "qdrant.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	childrss.EndWithParent(cmd) // a killed test binary never reaches its cleanup
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting qdrant peer %d: %w", i, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

// waitReady waits until peer i answers /readyz with 200 and /cluster lists want peers.
func (c *Cluster) waitReady(i, want int, limit time.Duration) error {
	p := c.Peers[i]
	base := "http://127.0.0.1:" + strconv.Itoa(p.HTTP)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var last string
	for {
		select {
		case <-p.done:
			return fmt.Errorf("qdrant peer %d exited while starting; log: %s", i, tail(filepath.Join(p.Dir, "qdrant.log")))
		case <-ctx.Done():
			return fmt.Errorf("qdrant peer %d not ready after %v (%s); log: %s", i, limit, last, tail(filepath.Join(p.Dir, "qdrant.log")))
		case <-time.After(100 * time.Millisecond):
		}
		code, _, err := get(ctx, base+"/readyz")
		if err != nil || code != 200 {
			last = fmt.Sprintf("readyz %d %v", code, err)
			continue
		}
		code, body, err := get(ctx, base+"/cluster")
		if err != nil || code != 200 {
			last = fmt.Sprintf("cluster %d %v", code, err)
			continue
		}
		var cl struct {
			Result struct {
				Peers map[string]json.RawMessage `json:"peers"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &cl); err != nil {
			last = "cluster: " + err.Error()
			continue
		}
		if len(cl.Result.Peers) >= want {
			return nil
		}
		last = fmt.Sprintf("cluster shows %d of %d peers", len(cl.Result.Peers), want)
	}
}

// Kill stops peer i with SIGKILL and waits for it to exit.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	p := c.Peers[i]
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

// Restart starts the given peers again on their ports and storage, all of them before it
// waits for any, and waits until each is ready and sees the whole cluster. Peers killed
// together come back together: a restarted peer is ready only when its shards have caught
// up, and a shard whose other replicas are on a peer still down cannot (stop 37's make test:
// peer 1, restarted alone after peers 1 and 2 were killed, was not ready after a minute of
// restarted shard transfers).
//
// A failure fails t, the test that restarts (a subtest's FailNow on the cluster's own test
// would end the wrong goroutine).
func (c *Cluster) Restart(t testing.TB, ids ...int) {
	t.Helper()
	for _, i := range ids {
		if err := c.spawn(i); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range ids {
		if err := c.waitReady(i, len(c.Peers), RestartTimeout); err != nil {
			t.Fatal(err)
		}
	}
}

// stopAll sends SIGTERM to every peer, then SIGKILL to those still running after 10 s.
func (c *Cluster) stopAll() {
	for _, p := range c.Peers {
		if p.cmd != nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(10 * time.Second)
	for _, p := range c.Peers {
		if p.cmd == nil {
			continue
		}
		select {
		case <-p.done:
		case <-deadline:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		p.cmd = nil
	}
}

func get(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var body []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	return res.StatusCode, body, nil
}

// freePorts picks n distinct free loopback ports for the server below the kernel's ephemeral
// range, at random. A port taken from that range (a listen on port 0) is released before the
// server binds it, and again for seconds while a killed peer restarts, and any test of the
// same run that listens on port 0 or dials out can be handed it in between; ports below the
// range are only ever taken by name. Where the range leaves no room, it falls back to port 0.
func freePorts(n int) ([]int, error) {
	lo := ephemeralLow()
	const first = 10000
	if lo-first < 1000 {
		return ephemeralPorts(n)
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
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // in use
		}
		l.Close()
		out = append(out, port)
	}
	return out, nil
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

// tail returns the last 2 KB of a log file, for errors.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return string(b)
}
