package qdrant

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// StoreOptions configure the collections of an index on a Qdrant cluster. The location's
// own ?shards= and ?replication=, when given, take precedence over them.
type StoreOptions struct {
	// Shards per collection; 0: DefaultShards.
	Shards uint32
	// Replication factor; 0: the engine's, min(the cluster's peers, 2) (Options).
	Replication uint32
	// BM25 are the k1 and b baked into the weights at build; searches must use the same.
	// Zero: backend.DefaultBM25, the searches' defaults.
	BM25 backend.BM25Params
}

// SetDefaults fills the zero fields with the defaults a collection gets: Shards
// (DefaultShards). Replication 0 stays the engine's choice, and BM25 zero is resolved with the
// location (Build). Flags calls it on a copy to show them.
func (o *StoreOptions) SetDefaults() {
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
}

// Flags registers --qdrant-shards and --qdrant-replication, with the defaults SetDefaults
// applies.
func (o *StoreOptions) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	o.Shards = d.Shards
	fs.Var(countFlag{&o.Shards}, "qdrant-shards", "shards of each collection of a qdrant:// index (the location's ?shards= wins)")
	fs.Var(countFlag{&o.Replication}, "qdrant-replication", "replication factor of each collection of a qdrant:// index; 0: the cluster's peers, at most 2 (the location's ?replication= wins)")
}

// countFlag is a uint32 flag that takes 1..MaxCount.
type countFlag struct{ p *uint32 }

func (f countFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(*f.p), 10)
}

func (f countFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || n > MaxCount {
		return fmt.Errorf("want an integer in 1..%d", MaxCount)
	}
	*f.p = uint32(n)
	return nil
}

// Build settles the collection settings for q: the location's shards and replication, else
// the options', and the BM25 parameters (default backend.DefaultBM25). The manifest records
// them.
func (o StoreOptions) Build(q *Location) manifest.QdrantBuild {
	shards, repl := o.Shards, o.Replication
	if q.Shards != 0 {
		shards = q.Shards
	}
	if q.Replication != 0 {
		repl = q.Replication
	}
	bm25 := o.BM25
	if bm25 == (backend.BM25Params{}) {
		bm25 = backend.DefaultBM25()
	}
	return manifest.QdrantBuild{Shards: shards, Replication: repl, K1: bm25.K1, B: bm25.B}
}

// placeholderDim is the dense vector size of the collections of an index without
// embeddings: the engine's collection layout always has a dense vector, never filled there.
const placeholderDim = 1
