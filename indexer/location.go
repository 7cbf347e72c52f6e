package indexer

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/indexer/store/local"
	qdrantstore "github.com/kairos-rag/kairos/indexer/store/qdrant"
)

// Location is where an index lives: a local directory, or a Qdrant cluster when Qdrant is
// set. It is a flag.Value (Set parses as ParseLocation does), which Flag registers as --index
// for every command; Open turns it into the index's store, the one place that tells the kinds
// apart.
type Location struct {
	Dir    string          // the index directory (a local index)
	Qdrant *QdrantLocation // the cluster (a Qdrant index); nil for a local one
}

// QdrantLocation names an index on a Qdrant cluster (qdrant.Location).
type QdrantLocation = qdrant.Location

// scheme matches a URL-like location ("s3://...", "http://..."): Kairos knows only qdrant://,
// and a local directory of such a name is refused rather than silently created.
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// ParseLocation parses an --index value: a local directory, or qdrant://HOST:PORT[,...]/NAME
// with the optional query parameters shards and replication (positive integers) and rest (a
// peer's REST address, host:port, asked for the cluster's peers). Anything else of the form
// scheme://... is refused, as are credentials, fragments, empty hosts, ports outside
// 1..65535, repeated or unknown parameters and names the engine would refuse.
func ParseLocation(s string) (Location, error) {
	if s == "" {
		return Location{}, errors.New("index location: empty")
	}
	if !strings.HasPrefix(s, qdrant.Scheme) {
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

// String writes the location back in the form ParseLocation reads ("" for none).
func (l Location) String() string {
	if l.Qdrant == nil {
		return l.Dir
	}
	return l.Qdrant.String()
}

// Set parses s into l (flag.Value).
func (l *Location) Set(s string) error {
	loc, err := ParseLocation(s)
	if err != nil {
		return err
	}
	*l = loc
	return nil
}

// IsZero reports whether l names no index (an --index not given).
func (l Location) IsZero() bool { return l.Dir == "" && l.Qdrant == nil }

// locationUsage is --index's help, the same for every command.
const locationUsage = "index `location`: a directory, or qdrant://HOST:PORT[,HOST:PORT...]/NAME[?shards=N&replication=N] for an index on a Qdrant cluster"

// Flag registers l as --index on fs: the one definition of the flag, which every command
// that works on an index shares. what, when not "", says what the command does with it.
func (l *Location) Flag(fs *flag.FlagSet, what string) { LocationFlag(fs, l, what) }

// LocationFlag registers v as --index on fs, as Flag does a Location: for a command whose
// --index takes several locations (serve's NAME=LOCATION collections), each of which v's Set
// parses with ParseLocation.
func LocationFlag(fs *flag.FlagSet, v flag.Value, what string) {
	usage := locationUsage
	if what != "" {
		usage += " (" + what + ")"
	}
	fs.Var(v, "index", usage)
}

// openStore returns the store of the index at loc: the one place that tells a local
// directory from a Qdrant cluster. It connects to nothing yet: each operation connects as it
// needs (the dimension of a Qdrant collection is known only from a manifest or an encoder).
func openStore(loc Location) (store.Store, error) {
	switch {
	case loc.Qdrant != nil:
		return qdrantstore.New(loc.Qdrant, nil), nil
	case loc.Dir != "":
		return local.New(loc.Dir), nil
	}
	return nil, errors.New("no index location (--index)")
}
