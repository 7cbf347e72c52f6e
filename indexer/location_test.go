package indexer

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

func TestParseLocation(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Location
		wantErr string // substring of the error; "" for success
	}{
		{in: "idx", want: Location{Dir: "idx"}},
		{in: "/var/lib/kairos/wiki", want: Location{Dir: "/var/lib/kairos/wiki"}},
		{in: "./qdrant", want: Location{Dir: "./qdrant"}},
		{in: "qdrant://127.0.0.1:6334/wiki", want: Location{Qdrant: &QdrantLocation{Hosts: []string{"127.0.0.1:6334"}, Name: "wiki"}}},
		{in: "qdrant://a:1,b:2,[::1]:6334/en.wiki-2024_1?shards=6&replication=2",
			want: Location{Qdrant: &QdrantLocation{Hosts: []string{"a:1", "b:2", "[::1]:6334"}, Name: "en.wiki-2024_1", Shards: 6, Replication: 2}}},
		{in: "qdrant://h:6334/w?replication=3", want: Location{Qdrant: &QdrantLocation{Hosts: []string{"h:6334"}, Name: "w", Replication: 3}}},
		{in: "qdrant://h:6334/w?rest=h:8080", want: Location{Qdrant: &QdrantLocation{Hosts: []string{"h:6334"}, Name: "w", REST: "h:8080"}}},
		{in: "qdrant://h:6334/w?rest=[::1]:6333&shards=2", want: Location{Qdrant: &QdrantLocation{Hosts: []string{"h:6334"}, Name: "w", Shards: 2, REST: "[::1]:6333"}}},
		{in: "qdrant://h:1/w?rest=h", wantErr: "rest="},
		{in: "qdrant://h:1/w?rest=:6333", wantErr: "rest="},
		{in: "qdrant://h:1/w?rest=h:0", wantErr: "rest="},
		{in: "", wantErr: "empty"},
		{in: "s3://bucket/idx", wantErr: `unknown scheme "s3"`},
		{in: "qdrant://h:6334", wantErr: "no index name"},
		{in: "qdrant://h:6334/", wantErr: "index name"},
		{in: "qdrant://h:6334/a/b", wantErr: "index name"},
		{in: "qdrant:///w", wantErr: "want host:port"},
		{in: "qdrant://h/w", wantErr: "want host:port"},
		{in: "qdrant://:6334/w", wantErr: "want host:port"},
		{in: "qdrant://h:0/w", wantErr: "port must be"},
		{in: "qdrant://h:65536/w", wantErr: "port must be"},
		{in: "qdrant://h:+80/w", wantErr: "port must be"},
		{in: "qdrant://h:080/w", wantErr: "port must be"},
		{in: "qdrant://h:1,,g:2/w", wantErr: "host 2"},
		{in: "qdrant://h:1,h:1/w", wantErr: "named twice"},
		{in: "qdrant://user:pw@h:1/w", wantErr: "credentials"},
		{in: "qdrant://h:1/w#x", wantErr: "fragments"},
		{in: "qdrant://h:1/w?shards=0", wantErr: "shards="},
		{in: "qdrant://h:1/w?shards=-1", wantErr: "shards="},
		{in: "qdrant://h:1/w?shards=1001", wantErr: "shards="},
		{in: "qdrant://h:1/w?shards=2&shards=3", wantErr: "given 2 times"},
		{in: "qdrant://h:1/w?replicas=2", wantErr: "unknown parameter"},
		{in: "qdrant://h:1/w?shards=2;x", wantErr: "query"},
	} {
		got, err := ParseLocation(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseLocation(%q) = %+v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseLocation(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if again, err := ParseLocation(got.String()); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParseLocation(%q).String() = %q reparses as %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

// FuzzParseLocation checks that the parser never panics, that what it accepts as a cluster
// satisfies the engine's rules, and that String writes back what parses to the same location.
func FuzzParseLocation(f *testing.F) {
	for _, s := range []string{"idx", "qdrant://127.0.0.1:6334/wiki", "qdrant://a:1,b:2/w?shards=6&replication=2",
		"qdrant://[::1]:6334/w", "qdrant://h:1/w?x=1", "http://x", "qdrant://@/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := ParseLocation(s)
		if err != nil {
			return
		}
		if q := loc.Qdrant; q != nil {
			if len(q.Hosts) == 0 || !indexNameRe.MatchString(q.Name) || q.Shards > qdrant.MaxCount || q.Replication > qdrant.MaxCount {
				t.Fatalf("ParseLocation(%q) accepted %+v", s, q)
			}
		} else if loc.Dir != s {
			t.Fatalf("ParseLocation(%q) = dir %q", s, loc.Dir)
		}
		again, err := ParseLocation(loc.String())
		if err != nil || !reflect.DeepEqual(again, loc) {
			t.Fatalf("ParseLocation(%q) = %+v; its String %q reparses as %+v, %v", s, loc, loc.String(), again, err)
		}
	})
}

// indexNameRe is what the Qdrant engine accepts as an index name.
var indexNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
