package qdrant

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

func TestOptionsValidate(t *testing.T) {
	ok := Options{Hosts: []string{"127.0.0.1:6334"}, Index: "wiki", Dim: 384}
	tests := []struct {
		name string
		edit func(*Options)
		want string // "" : valid
	}{
		{"defaults", func(o *Options) {}, ""},
		{"no host", func(o *Options) { o.Hosts = nil }, "no host"},
		{"host without port", func(o *Options) { o.Hosts = []string{"localhost"} }, "want host:port"},
		{"bad index name", func(o *Options) { o.Index = "a/b" }, "index name"},
		{"no dimension", func(o *Options) { o.Dim = 0 }, "dimension"},
		{"b above 1", func(o *Options) { o.BM25 = backend.BM25Params{K1: 1.2, B: 1.5} }, "BM25"},
		{"negative retries", func(o *Options) { o.Retries = -1 }, "retries"},
		{"HNSW options", func(o *Options) {
			o.HNSW = HNSW{M: 32, EfConstruct: 200, Ef: 128, IndexingThresholdKB: 100, FullScanThresholdKB: 10}
		}, ""},
		{"negative HNSW ef", func(o *Options) { o.HNSW.Ef = -1 }, "HNSW ef -1"},
		{"negative indexing threshold", func(o *Options) { o.HNSW.IndexingThresholdKB = -5 }, "indexing threshold"},
		{"HNSW m 1", func(o *Options) { o.HNSW.M = 1 }, "HNSW m 1"},
		{"REST without port", func(o *Options) { o.REST = "localhost" }, "REST address"},
	}
	for _, tc := range tests {
		o := ok
		tc.edit(&o)
		got := o
		got.SetDefaults()
		err := got.validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		// Replication stays 0: the cluster is asked for its peers when a collection is made.
		if tc.name == "defaults" && (got.Shards != 6 || got.Replication != 0 || got.REST != "127.0.0.1:6333" || got.BM25 != backend.DefaultBM25()) {
			t.Errorf("defaults: %+v", got)
		}
	}
}

// TestUnreachable: no server on the port: New fails, naming the address, after its retries.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = New(context.Background(), Options{Hosts: []string{addr}, Index: "x", Dim: 4, Retries: 2, Backoff: 10 * time.Millisecond, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("error %v, want one naming %s as unreachable", err, addr)
	}
}

// TestMisconfigured: a collection with another dense size, or without the sparse vectors, is
// refused with what differs; a reader with other BM25 parameters gets ErrScoring.
func TestMisconfigured(t *testing.T) {
	ctx := context.Background()
	c := qdranttest.Start(t, 1)
	e8 := newEngine(t, c, "mis", Options{Dim: 8})
	gen := backend.Gen{Name: "g-000001"}
	writeLexical(t, e8.Lexical(), gen, sciFact(t)[:50])
	e16 := newEngine(t, c, "mis", Options{Dim: 16})
	if _, err := e16.Vectors().Open(ctx, gen, nil); err == nil || !strings.Contains(err.Error(), "dense vector size 8") || !strings.Contains(err.Error(), "mis-g-000001") {
		t.Errorf("wrong size: %v", err)
	}
	if _, err := e8.Lexical().Open(ctx, gen, backend.Scoring{Params: backend.BM25Params{K1: 0.9, B: 0.4}}, nil); !errors.Is(err, backend.ErrScoring) {
		t.Errorf("other k1/b: %v, want ErrScoring", err)
	}
	if _, err := e8.Lexical().Open(ctx, gen, backend.Scoring{Stats: backend.CollectionStats{Docs: 7, Tokens: 70}}, nil); !errors.Is(err, backend.ErrScoring) {
		t.Errorf("other statistics: %v, want ErrScoring", err)
	}
	// A collection made by something else: dense vector only.
	err := e8.clients[0].CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "mis-g-000009",
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{vecDense: {Size: 8, Distance: qdrant.Distance_Cosine}})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e8.Lexical().Begin(ctx, backend.Gen{Name: "g-000009"}, nil, backend.LexicalBegin{Analyzer: "en"})
	if err == nil || !strings.Contains(err.Error(), `no sparse vector "bm25"`) {
		t.Errorf("missing sparse vector: %v", err)
	}
}
