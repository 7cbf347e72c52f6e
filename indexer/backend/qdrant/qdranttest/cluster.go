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
	ports portReservations
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
	// Every port of the cluster at once, each reserved until the cluster stops: a peer
	// spawned but not yet listening leaves its ports looking free to the next one.
	ports, err := c.ports.reserve(3 * n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := &Peer{HTTP: ports[3*i], GRPC: ports[3*i+1], P2P: ports[3*i+2], Dir: filepath.Join(root, "peer"+strconv.Itoa(i))}
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
		// Qdrant logs a port it could not bind and runs on; whatever answers on that
		// port is not this peer.
		if log := tail(filepath.Join(p.Dir, "qdrant.log")); strings.Contains(log, "Address already in use") {
			return fmt.Errorf("qdrant peer %d could not bind one of its ports (http %d, grpc %d, p2p %d); log: %s", i, p.HTTP, p.GRPC, p.P2P, log)
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
	c.ports.release()
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
