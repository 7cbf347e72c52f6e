package qdrant

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
)

// TestEnsureCollectionNotFoundAfterCreate: a peer that answers NotFound for a collection
// right after creating it (one lagging behind the cluster's consensus, as a restarted peer
// does) does not fail the creation: it is created again once per NotFound and then used. A
// peer that never finds it fails the creation after the engine's retries, naming the
// collection. The answers are a real peer's, with the lag put in by a client interceptor.
func TestEnsureCollectionNotFoundAfterCreate(t *testing.T) {
	c := qdranttest.Start(t, 1)
	ctx := context.Background()
	const retries = 3
	for _, tc := range []struct {
		name     string
		notFound int32 // how many collection infos answer NotFound
		wantErr  bool
	}{
		{"found at once", 0, false},
		{"not found twice", 2, false},
		{"never found", retries + 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lag, creates, infos atomic.Int32
			lag.Store(tc.notFound)
			intercept := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				switch method {
				case qdrant.Collections_Create_FullMethodName:
					creates.Add(1)
				case qdrant.Collections_Get_FullMethodName:
					infos.Add(1)
					if lag.Add(-1) >= 0 {
						return status.Error(codes.NotFound, "Not found: Collection doesn't exist!")
					}
				}
				return invoker(ctx, method, req, reply, cc, opts...)
			}
			cl, err := qdrant.NewClient(&qdrant.Config{
				Host: "127.0.0.1", Port: c.Peers[0].GRPC, SkipCompatibilityCheck: true,
				GrpcOptions: []grpc.DialOption{grpc.WithUnaryInterceptor(intercept)},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Close() })
			o := Options{Hosts: c.Addrs(), Index: "nf", Dim: 8, Retries: retries, Backoff: time.Millisecond, Replication: 1}
			o.SetDefaults()
			e := &Engine{opts: o, clients: []*qdrant.Client{cl}}
			coll := e.Collection(strings.ReplaceAll(tc.name, " ", "-"))
			err = e.ensureCollection(ctx, coll)
			switch {
			case tc.wantErr && (err == nil || !strings.Contains(err.Error(), coll) || status.Code(err) != codes.NotFound):
				t.Fatalf("ensureCollection = %v, want NotFound naming %s", err, coll)
			case tc.wantErr:
				if creates.Load() != retries+1 || infos.Load() != retries+1 {
					t.Errorf("%d creates and %d infos, want %d of each (the engine's retries + 1)", creates.Load(), infos.Load(), retries+1)
				}
			case err != nil:
				t.Fatalf("ensureCollection: %v", err)
			case creates.Load() != tc.notFound+1 || infos.Load() != tc.notFound+1:
				t.Errorf("%d creates and %d infos, want %d of each", creates.Load(), infos.Load(), tc.notFound+1)
			}
			if !tc.wantErr {
				if err := e.checkCollection(ctx, coll); err != nil {
					t.Errorf("the collection after ensureCollection: %v", err)
				}
			}
			if err := e.Drop(ctx, backend.Gen{Name: strings.ReplaceAll(tc.name, " ", "-")}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
