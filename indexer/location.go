package indexer

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Location is where an index lives: a local directory, or a Qdrant cluster when Qdrant is
// set. Every command takes it as --index, parsed by ParseLocation.
type Location struct {
	Dir    string          // the index directory (a local index)
	Qdrant *QdrantLocation // the cluster (a Qdrant index); nil for a local one
}

// QdrantLocation names an index on a Qdrant cluster:
// qdrant://HOST:PORT[,HOST:PORT...]/NAME[?shards=N&replication=N&rest=HOST:PORT].
type QdrantLocation struct {
	Hosts []string // gRPC addresses, host:port
	Name  string   // the index: its alias, and the prefix of its generations' collections
	// Shards and Replication of new collections; 0 leaves QdrantOptions' (and then the
	// engine's) default.
	Shards, Replication uint32
	// REST is one peer's REST address (host:port), which the engine asks for the cluster's
	// peers when no replication is given; "" means the first host's port minus one
	// (Qdrant's 6333 beside 6334).
	REST string
}

// QdrantScheme starts an index location on a Qdrant cluster.
const QdrantScheme = "qdrant://"

// qdrantIndexName is what the engine accepts as an index name.
var qdrantIndexName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

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
	bad := func(format string, a ...any) (Location, error) {
		return Location{}, fmt.Errorf("index location %q: %s (want qdrant://HOST:PORT[,HOST:PORT...]/NAME[?shards=N&replication=N&rest=HOST:PORT])", s, fmt.Sprintf(format, a...))
	}
	rest := s[len(QdrantScheme):]
	if strings.ContainsAny(rest, "#@") {
		return bad("credentials (@) and fragments (#) are not accepted")
	}
	hostPart, pathQuery, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("no index name")
	}
	name, query, hasQuery := strings.Cut(pathQuery, "?")
	q := &QdrantLocation{Name: name}
	if !qdrantIndexName.MatchString(name) {
		return bad("index name %q: want 1-100 letters, digits, '-', '_' or '.'", name)
	}
	seen := map[string]bool{}
	for i, h := range strings.Split(hostPart, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return bad("host %d %q: want host:port", i+1, h)
		}
		if strings.ContainsAny(host, " \t/\\%") {
			return bad("host %d %q: not a host name", i+1, h)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 || port != strconv.Itoa(p) {
			return bad("host %d %q: port must be 1..65535", i+1, h)
		}
		if seen[h] {
			return bad("host %q named twice", h)
		}
		seen[h] = true
		q.Hosts = append(q.Hosts, h)
	}
	if hasQuery {
		vals, err := url.ParseQuery(query)
		if err != nil {
			return bad("query: %v", err)
		}
		for k, v := range vals {
			if len(v) != 1 {
				return bad("parameter %q given %d times", k, len(v))
			}
			if k == "rest" {
				host, port, err := net.SplitHostPort(v[0])
				p, perr := strconv.Atoi(port)
				if err != nil || host == "" || strings.ContainsAny(host, " \t/\\%") || perr != nil || p < 1 || p > 65535 || port != strconv.Itoa(p) {
					return bad("rest=%q: want the host:port of a peer's REST API", v[0])
				}
				q.REST = v[0]
				continue
			}
			n, err := strconv.ParseUint(v[0], 10, 32)
			if err != nil || n == 0 || n > maxQdrantCount {
				return bad("%s=%q: want an integer in 1..%d", k, v[0], maxQdrantCount)
			}
			switch k {
			case "shards":
				q.Shards = uint32(n)
			case "replication":
				q.Replication = uint32(n)
			default:
				return bad("unknown parameter %q (want shards, replication or rest)", k)
			}
		}
	}
	return Location{Qdrant: q}, nil
}

// maxQdrantCount bounds shards and replication: far above any sensible cluster, low enough
// that a typo (an extra digit or two) is refused rather than sent to the cluster.
const maxQdrantCount = 1000

// String writes the location back in the form ParseLocation reads.
func (l Location) String() string {
	if l.Qdrant == nil {
		return l.Dir
	}
	q := l.Qdrant
	s := QdrantScheme + strings.Join(q.Hosts, ",") + "/" + q.Name
	var params []string
	if q.Shards > 0 {
		params = append(params, "shards="+strconv.FormatUint(uint64(q.Shards), 10))
	}
	if q.Replication > 0 {
		params = append(params, "replication="+strconv.FormatUint(uint64(q.Replication), 10))
	}
	if q.REST != "" {
		params = append(params, "rest="+q.REST)
	}
	if len(params) > 0 {
		s += "?" + strings.Join(params, "&")
	}
	return s
}
