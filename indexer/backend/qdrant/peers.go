package qdrant

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// MaxDefaultReplication caps the replication factor a collection gets when Options names
// none: two copies of every shard let one peer fail without losing reads or writes, which is
// what a small cluster needs; each further copy costs the collection's size again in storage
// and in write traffic, a price for the user to choose (?replication=N).
const MaxDefaultReplication = 2

// replicationFactor is the replication factor of new collections: Options.Replication when
// set, else min(peers, MaxDefaultReplication) with peers counted by the cluster itself
// (GET /cluster on Options.REST), so that an index addressed by one host of a three-peer
// cluster survives a peer going down. When the cluster cannot be asked (no REST API where
// it was looked for), it falls back to counting the hosts named, as before, and says so in
// the log.
func (e *Engine) replicationFactor(ctx context.Context) uint32 {
	if e.opts.Replication > 0 {
		return e.opts.Replication
	}
	e.replOnce.Do(func() {
		// A REST port that drops packets must not hold a build for the request timeout.
		peers, err := clusterPeers(ctx, e.opts.REST, min(e.opts.Timeout, 10*time.Second))
		if err != nil {
			peers = len(e.opts.Hosts)
			e.opts.Logger.Warn("qdrant: could not ask the cluster for its peers; replication from the hosts named",
				"rest", e.opts.REST, "err", err, "hosts", peers)
		}
		e.repl = uint32(min(max(peers, 1), MaxDefaultReplication))
	})
	return e.repl
}

// clusterPeers asks the REST API at addr (host:port) how many peers the cluster has: the
// peers of GET /cluster, or 1 when clustering is disabled (a single node).
func clusterPeers(ctx context.Context, addr string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := "http://" + addr + "/cluster"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	n, err := parseClusterPeers(body)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	return n, nil
}

// parseClusterPeers reads the number of peers from a /cluster response.
func parseClusterPeers(body []byte) (int, error) {
	var r struct {
		Result *struct {
			Status string                     `json:"status"`
			Peers  map[string]json.RawMessage `json:"peers"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("not a cluster status: %w", err)
	}
	switch {
	case r.Result == nil:
		return 0, fmt.Errorf("not a cluster status: no result")
	case r.Result.Status == "disabled":
		return 1, nil
	case r.Result.Status != "enabled":
		return 0, fmt.Errorf("cluster status %q (want enabled or disabled)", r.Result.Status)
	case len(r.Result.Peers) == 0:
		return 0, fmt.Errorf("cluster enabled but lists no peer")
	}
	return len(r.Result.Peers), nil
}

// defaultREST is where Qdrant's REST API listens by default beside a gRPC address: the same
// host, the port below (6333 beside 6334).
func defaultREST(grpcHost string) string {
	host, port, err := net.SplitHostPort(grpcHost)
	if err != nil {
		return grpcHost
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 1 {
		return grpcHost
	}
	return net.JoinHostPort(host, strconv.Itoa(p-1))
}
