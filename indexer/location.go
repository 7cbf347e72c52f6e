package indexer

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// Location is where an index lives: a local directory, or a Qdrant cluster when Qdrant is
// set. Every command takes it as --index, parsed by ParseLocation.
type Location struct {
	Dir    string          // the index directory (a local index)
	Qdrant *QdrantLocation // the cluster (a Qdrant index); nil for a local one
}

// QdrantLocation names an index on a Qdrant cluster (qdrant.Location); QdrantScheme starts
// its location.
type QdrantLocation = qdrant.Location

// QdrantScheme starts an index location on a Qdrant cluster.
const QdrantScheme = qdrant.Scheme

// QdrantOptions configure the collections of an index on a Qdrant cluster
// (qdrant.StoreOptions).
type QdrantOptions = qdrant.StoreOptions

// scheme matches a URL-like location ("s3://...", "http://..."): Kairos knows only qdrant://,
// and a local directory of such a name is refused rather than silently created.
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// ParseLocation parses an --index value: a local directory, or qdrant://HOST:PORT[,...]/NAME
// with the optional query parameters shards and replication (positive integers) and rest (a
// peer's REST address, host:port, asked for the cluster's peers). Anything
// else of the form scheme://... is refused, as are credentials, fragments, empty hosts, ports
// outside 1..65535, repeated or unknown parameters and names the engine would refuse.
func ParseLocation(s string) (Location, error) {
	if s == "" {
		return Location{}, errors.New("index location: empty")
	}
	if !strings.HasPrefix(s, QdrantScheme) {
		if m := scheme.FindString(s); m != "" {
			return Location{}, fmt.Errorf("index location %q: unknown scheme %q (want a directory or qdrant://HOST:PORT/NAME)", s, strings.TrimSuffix(m, "://"))
		}
		return Location{Dir: s}, nil
	}
	q, err := qdrant.ParseLocation(s)
	if err != nil {
		return Location{}, err
	}
	return Location{Qdrant: q}, nil
}

// String writes the location back in the form ParseLocation reads.
func (l Location) String() string {
	if l.Qdrant == nil {
		return l.Dir
	}
	return l.Qdrant.String()
}
