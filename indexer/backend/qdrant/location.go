package qdrant

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Location names an index on a Qdrant cluster:
// qdrant://HOST:PORT[,HOST:PORT...]/NAME[?shards=N&replication=N&rest=HOST:PORT].
type Location struct {
	Hosts []string // gRPC addresses, host:port
	Name  string   // the index: its alias, and the prefix of its generations' collections
	// Shards and Replication of new collections; 0 leaves StoreOptions' (and then the
	// engine's) default.
	Shards, Replication uint32
	// REST is one peer's REST address (host:port), which the engine asks for the cluster's
	// peers when no replication is given; "" means the first host's port minus one
	// (Qdrant's 6333 beside 6334).
	REST string
}

// Scheme starts an index location on a Qdrant cluster.
const Scheme = "qdrant://"

// MaxCount bounds shards and replication: far above any sensible cluster, low enough that a
// typo (an extra digit or two) is refused rather than sent to the cluster.
const MaxCount = 1000

// ParseLocation parses qdrant://HOST:PORT[,...]/NAME with the optional query parameters
// shards and replication (positive integers) and rest (a peer's REST address, host:port,
// asked for the cluster's peers). It refuses credentials, fragments, empty hosts, ports
// outside 1..65535, repeated or unknown parameters and names the engine would refuse.
func ParseLocation(s string) (*Location, error) {
	bad := func(format string, a ...any) (*Location, error) {
		return nil, fmt.Errorf("index location %q: %s (want qdrant://HOST:PORT[,HOST:PORT...]/NAME[?shards=N&replication=N&rest=HOST:PORT])", s, fmt.Sprintf(format, a...))
	}
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return bad("not a %s location", Scheme)
	}
	if strings.ContainsAny(rest, "#@") {
		return bad("credentials (@) and fragments (#) are not accepted")
	}
	hostPart, pathQuery, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("no index name")
	}
	name, query, hasQuery := strings.Cut(pathQuery, "?")
	q := &Location{Name: name}
	if !indexName.MatchString(name) {
		return bad("index name %q: want 1-100 letters, digits, '-', '_' or '.'", name)
	}
	seen := map[string]bool{}
	for i, h := range strings.Split(hostPart, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return bad("host %d %q: want host:port", i+1, h)
		}
		if !hostName(host) {
			return bad("host %d %q: not a host name", i+1, h)
		}
		if !portNumber(port) {
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
				if host, port, err := net.SplitHostPort(v[0]); err != nil || host == "" || !hostName(host) || !portNumber(port) {
					return bad("rest=%q: want the host:port of a peer's REST API", v[0])
				}
				q.REST = v[0]
				continue
			}
			n, err := strconv.ParseUint(v[0], 10, 32)
			if err != nil || n == 0 || n > MaxCount {
				return bad("%s=%q: want an integer in 1..%d", k, v[0], MaxCount)
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
	return q, nil
}

// hostName reports whether host may name a host: no blanks, slashes or '%'.
func hostName(host string) bool { return !strings.ContainsAny(host, " \t/\\%") }

// portNumber reports whether port is 1..65535 written without leading zeros or sign.
func portNumber(port string) bool {
	p, err := strconv.Atoi(port)
	return err == nil && p >= 1 && p <= 65535 && port == strconv.Itoa(p)
}

// String writes the location back in the form ParseLocation reads.
func (q *Location) String() string {
	s := Scheme + strings.Join(q.Hosts, ",") + "/" + q.Name
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
