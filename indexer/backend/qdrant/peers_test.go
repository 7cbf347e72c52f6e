package qdrant

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// TestReplicationFromClusterPeers: an index addressed by one host of a three-peer cluster
// gets replication 2 (the cluster's peers, capped), not 1 (the hosts named), so that a
// peer going down leaves every query answered.
func TestReplicationFromClusterPeers(t *testing.T) {
	ctx := context.Background()
	c := qdranttest.Start(t, 3)
	o := Options{Hosts: []string{c.Peers[0].GRPCAddr()}, REST: c.Peers[0].HTTPAddr(), Index: "one", Dim: testDim, BM25: testParams}
	e, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n, err := clusterPeers(ctx, o.REST, e.opts.Timeout); err != nil || n != 3 {
		t.Fatalf("clusterPeers = %d, %v; want 3", n, err)
	}
	ps := sciFact(t)[:300]
	gen := backend.Gen{Name: "g-000001"}
	writeGen(t, e, gen, ps, randomVectors(len(ps), 3))
	info, err := e.clients[0].GetCollectionInfo(ctx, e.Collection(gen.Name))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.GetConfig().GetParams().GetReplicationFactor(); got != 2 {
		t.Fatalf("collection replication factor %d, want 2 (3 peers, one host named)", got)
	}

	r, err := e.Lexical().Open(ctx, gen, backend.Scoring{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	queries := sciFactQueries(t)[:20]
	want := make([][]backend.Hit, len(queries))
	for i, q := range queries {
		if want[i], err = r.Search(ctx, backend.LexicalQuery{Terms: q, N: 10}); err != nil {
			t.Fatal(err)
		}
	}
	c.Kill(2) // a peer the location does not name
	for i, q := range queries {
		got, err := r.Search(ctx, backend.LexicalQuery{Terms: q, N: 10})
		if err != nil {
			t.Fatalf("query %d with peer 2 down: %v", i, err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("query %d with peer 2 down: %v, before %v", i, hitKeys(got), hitKeys(want[i]))
		}
	}
}

// TestReplicationFallback: a replication factor named is used as is; a cluster that cannot be
// asked (nothing on the REST port) falls back to the hosts named, and says so in the log.
func TestReplicationFallback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	var log strings.Builder
	for _, tc := range []struct {
		hosts []string
		repl  uint32
		want  uint32
	}{
		{[]string{"a:1"}, 0, 1},
		{[]string{"a:1", "b:1", "c:1"}, 0, 2},
		{[]string{"a:1"}, 3, 3},
	} {
		log.Reset()
		o := Options{Hosts: tc.hosts, REST: closed, Index: "x", Dim: 4, Replication: tc.repl,
			Logger: slog.New(slog.NewTextHandler(&log, nil))}
		o.SetDefaults()
		if err := o.validate(); err != nil {
			t.Fatal(err)
		}
		e := &Engine{opts: o}
		if got := e.replicationFactor(context.Background()); got != tc.want {
			t.Errorf("%d hosts, replication %d: %d, want %d", len(tc.hosts), tc.repl, got, tc.want)
		}
		if warned := strings.Contains(log.String(), "could not ask the cluster"); warned != (tc.repl == 0) {
			t.Errorf("%d hosts, replication %d: log %q", len(tc.hosts), tc.repl, log.String())
		}
	}
}

// TestClusterPeersRecorded reads /cluster responses as Qdrant 1.16 writes them.
func TestClusterPeersRecorded(t *testing.T) {
	tests := []struct {
		name, body string
		want       int
		err        string
	}{
		{"three peers", recordedCluster3, 3, ""},
		{"clustering disabled", `{"result":{"status":"disabled"},"status":"ok","time":0.000003}`, 1, ""},
		{"no result", `{"status":{"error":"x"}}`, 0, "no result"},
		{"not json", `<html>`, 0, "not a cluster status"},
		{"no peers", `{"result":{"status":"enabled","peers":{}}}`, 0, "no peer"},
		{"unknown status", `{"result":{"status":"maybe"}}`, 0, "cluster status"},
	}
	for _, tc := range tests {
		n, err := parseClusterPeers([]byte(tc.body))
		if n != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %d, %v; want %d, %q", tc.name, n, err, tc.want, tc.err)
		}
	}
	// Over HTTP: a status other than 200 is an error naming the URL.
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cluster" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, recordedCluster3)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	if n, err := clusterPeers(context.Background(), ln.Addr().String(), 5*time.Second); n != 3 || err != nil {
		t.Errorf("over HTTP: %d, %v", n, err)
	}
}

// recordedCluster3 is GET /cluster of a three-peer qdranttest cluster of Qdrant 1.16.3.
const recordedCluster3 = `{"result":{"status":"enabled","peer_id":5909787523535264,"peers":{"5868424252671564":{"uri":"http://127.0.0.1:43407/"},"5909787523535264":{"uri":"http://127.0.0.1:34529/"},"4804063887087778":{"uri":"http://127.0.0.1:33691/"}},"raft_info":{"term":1,"commit":9,"pending_operations":0,"leader":5909787523535264,"role":"Leader","is_voter":true},"consensus_thread_status":{"consensus_thread_status":"working","last_update":"2026-11-24T13:35:50.830704880Z"},"message_send_failures":{}},"status":"ok","time":8.724e-6}`
