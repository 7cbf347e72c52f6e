package qdrant

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Distance is the similarity of the dense vectors.
type Distance int

const (
	Cosine Distance = iota // the zero value: vectors normalised, cosine similarity
	Dot                    // dot product of the vectors as given
)

// Options configure an Engine. Zero fields take the defaults documented on each.
type Options struct {
	// Hosts are the gRPC addresses (host:port) of one or more peers; requests go to the first
	// and move to the next on a transport failure. Required.
	Hosts []string
	// Index names the index: generation g is the collection "<Index>-<g>", the live one the
	// alias "<Index>". Letters, digits, '-', '_' and '.'. Required.
	Index string
	// Dim is the dense vector dimension (the embedding model's). Required.
	Dim      int
	Distance Distance
	// HNSW configures Qdrant's graph index of the dense vectors (see HNSW). Default: Qdrant's.
	HNSW HNSW
	// BM25 are the k1 and b baked into the sparse vectors at build; a reader opened with
	// others is refused with backend.ErrScoring. Default backend.DefaultBM25, the searches'
	// (the indexer passes its own, recorded in the manifest, in any case).
	BM25 backend.BM25Params
	// Shards per collection. Default 6: divisible by 1, 2, 3 and 6 peers, so shards spread
	// evenly on the small clusters Kairos targets and a cluster can grow to 6 peers without
	// resharding; more shards only add per-shard overhead on a small corpus.
	Shards uint32
	// Replication is the replication factor. Default: min(peers, MaxDefaultReplication), the
	// peers counted by the cluster (GET /cluster on REST), so that one peer may fail without
	// losing reads or writes however many hosts the location names; when the cluster cannot
	// be asked, 2 when more than one host is named, else 1.
	Replication uint32
	// REST is the host:port of one peer's REST API, asked for the cluster's peers when
	// Replication is 0. Default: the first host with the port below its gRPC port (Qdrant's
	// 6333 beside 6334).
	REST string
	// Batch is the number of points per upsert request. Default 256.
	Batch int
	// Parallel is the number of upsert requests in flight. Default 4.
	Parallel int
	// Retries is how many times a failed request is retried (transport failures, timeouts,
	// overload), with exponential backoff from Backoff. Default 6 and 100ms.
	Retries int
	Backoff time.Duration
	// Timeout bounds one request. Default 60s.
	Timeout time.Duration
	// SpillDir holds the writers' temporary files. Default os.TempDir().
	SpillDir string
	// Logger receives retries and progress. Default: discard.
	Logger *slog.Logger
}

// DefaultShards is Options.Shards' default (see there).
const DefaultShards = 6

var indexName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// SetDefaults fills the zero fields with the defaults an Engine applies (each field says
// which); REST depends on the first host.
func (o *Options) SetDefaults() {
	if o.BM25 == (backend.BM25Params{}) {
		o.BM25 = backend.DefaultBM25()
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.REST == "" && len(o.Hosts) > 0 {
		o.REST = defaultREST(o.Hosts[0])
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Retries == 0 {
		o.Retries = 6
	}
	if o.Backoff <= 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// validate reports the first option an Engine cannot work with; the defaults are set.
func (o *Options) validate() error {
	if len(o.Hosts) == 0 {
		return errors.New("qdrant: no host")
	}
	for _, h := range o.Hosts {
		if _, _, err := net.SplitHostPort(h); err != nil {
			return fmt.Errorf("qdrant: host %q: want host:port (%v)", h, err)
		}
	}
	if !indexName.MatchString(o.Index) {
		return fmt.Errorf("qdrant: index name %q: want 1-100 letters, digits, '-', '_' or '.'", o.Index)
	}
	if o.Dim <= 0 {
		return fmt.Errorf("qdrant: dense dimension %d: must be positive", o.Dim)
	}
	if o.Distance != Cosine && o.Distance != Dot {
		return fmt.Errorf("qdrant: unknown distance %d", o.Distance)
	}
	if err := o.HNSW.validate(); err != nil {
		return err
	}
	if o.BM25.K1 <= 0 || o.BM25.B < 0 || o.BM25.B > 1 {
		return fmt.Errorf("qdrant: BM25 k1 %v must be > 0 and b %v in [0,1]", o.BM25.K1, o.BM25.B)
	}
	if _, _, err := net.SplitHostPort(o.REST); err != nil {
		return fmt.Errorf("qdrant: REST address %q: want host:port (%v)", o.REST, err)
	}
	if o.Retries < 0 {
		return fmt.Errorf("qdrant: retries %d: must be >= 0", o.Retries)
	}
	return nil
}
