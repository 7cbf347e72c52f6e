package indexer

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// QdrantOptions configure the collections of an index on a Qdrant cluster. The location's
// own ?shards= and ?replication=, when given, take precedence over them.
type QdrantOptions struct {
	// Shards per collection; 0: qdrant.DefaultShards.
	Shards uint32
	// Replication factor; 0: the engine's, min(the cluster's peers, 2) (qdrant.Options).
	Replication uint32
	// BM25 are the k1 and b baked into the weights at build; searches must use the same.
	// Zero: BM25K1 and BM25B, the searches' defaults.
	BM25 backend.BM25Params
}

// Flags registers --qdrant-shards (default qdrant.DefaultShards) and --qdrant-replication
// (default 0: the engine's choice).
func (o *QdrantOptions) Flags(fs *flag.FlagSet) {
	if o.Shards == 0 {
		o.Shards = qdrant.DefaultShards
	}
	fs.Var(countFlag{&o.Shards}, "qdrant-shards", "shards of each collection of a qdrant:// index (the location's ?shards= wins)")
	fs.Var(countFlag{&o.Replication}, "qdrant-replication", "replication factor of each collection of a qdrant:// index; 0: the cluster's peers, at most 2 (the location's ?replication= wins)")
}

// countFlag is a uint32 flag that takes 1..maxQdrantCount.
type countFlag struct{ p *uint32 }

func (f countFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(*f.p), 10)
}

func (f countFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || n > maxQdrantCount {
		return fmt.Errorf("want an integer in 1..%d", maxQdrantCount)
	}
	*f.p = uint32(n)
	return nil
}

// merge settles the shards and replication of q: the location's, else the options'.
func (o QdrantOptions) merge(q *QdrantLocation) (shards, replication uint32) {
	shards, replication = o.Shards, o.Replication
	if q.Shards != 0 {
		shards = q.Shards
	}
	if q.Replication != 0 {
		replication = q.Replication
	}
	return shards, replication
}

// Record slots of a generation's collection (qdrant.Engine.WriteRecord).
const (
	recordManifest   = 0
	recordDocTable   = 1
	recordCheckpoint = 2 // a checkpoint generation's progress (qdrantresume.go)
)

// placeholderDim is the dense vector size of the collections of an index without
// embeddings: the engine's collection layout always has a dense vector, never filled there.
const placeholderDim = 1

// connectQdrant connects to the cluster of q for vectors of dim.
func connectQdrant(ctx context.Context, q *QdrantLocation, o QdrantOptions, dim int, log *slog.Logger) (*qdrant.Engine, error) {
	b := o.build(q)
	return qdrant.New(ctx, qdrant.Options{Hosts: q.Hosts, REST: q.REST, Index: q.Name, Dim: dim, Shards: b.Shards, Replication: b.Replication,
		BM25: backend.BM25Params{K1: b.K1, B: b.B}, Logger: log})
}

// build settles the collection settings for q: the location's shards and replication, else
// the options', and the BM25 parameters (default BM25K1, BM25B).
func (o QdrantOptions) build(q *QdrantLocation) QdrantBuild {
	shards, repl := o.merge(q)
	if o.BM25 == (backend.BM25Params{}) {
		o.BM25 = backend.DefaultBM25()
	}
	return QdrantBuild{Shards: shards, Replication: repl, K1: o.BM25.K1, B: o.BM25.B}
}
