package scalebench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLuceneAnchor runs the compiled anchor on passages that exercise its JSON reader (escapes,
// both record shapes) and checks what it indexed by what the queries find; a malformed line
// must stop it with the file and line named. It needs Debian's liblucene8-java and a JDK.
func TestLuceneAnchor(t *testing.T) {
	cache := t.TempDir()
	l, err := prepareLucene(context.Background(), "java", "/usr/share/java", cache)
	if err != nil {
		t.Skipf("lucene anchor unavailable: %v", err)
	}
	// The second prepare finds the compiled classes in the cache and compiles nothing.
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("cache holds %d entries after one compile, want 1", len(entries))
	}
	if _, err := prepareLucene(context.Background(), "java", "/usr/share/java", cache); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	passages := filepath.Join(dir, "p.jsonl")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(passages, `{"id":"a","title":"Zebra","text":"stripes \"quoted\" \u00e9t\u00e9 line\nbreak"}`+"\n"+
		`{"passage_id":7,"text":"horses gallop in the meadow"}`+"\n"+
		` { "id" : "c" , "title" : "" , "text" : "nothing else here" } `+"\n"+
		// kairos passages' shape: arrays, objects and literals the anchor skips
		`{"id":"d","text":"unicorns","ordinal":0,"years":[{"from":2006,"to":2006,"pos":[1,2]}],"x":{"a":"}]"},"b":true,"n":null,"f":false}`+"\n")
	queries := filepath.Join(dir, "q.jsonl")
	// zebra only in a title, "été" behind \u escapes, "horses" in the passage_id shape, and one
	// word in no passage.
	write(queries, `"zebra"`+"\n"+`"été"`+"\n"+`"galloping horse"`+"\n\n"+`"xylophone"`+"\n"+`"unicorn"`+"\n")
	var stderr bytes.Buffer
	r, err := l.run(context.Background(), dir, passages, queries, 10, 0, 2, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if r.Passages != 4 || r.Queries != 5 || r.Empty != 1 || r.Segments < 1 || r.PeakRSS <= 0 || r.IndexBytes <= 0 || r.Threads != 2 {
		t.Errorf("result %+v: want 4 passages on 2 threads, 5 queries of which 1 empty, RSS and size measured", r)
	}
	if r.MergedSegments != 1 || r.MergedP50MS <= 0 || r.MergeS <= 0 {
		t.Errorf("result %+v: want the queries timed again on one merged segment", r)
	}
	write(passages, `{"id":"a","text":"fine"}`+"\n"+`{"id":"b","text":"unterminated}`+"\n")
	stderr.Reset()
	if _, err := l.run(context.Background(), dir, passages, queries, 10, 0, 2, &stderr); err == nil ||
		!strings.Contains(stderr.String(), passages+": line 2") {
		t.Errorf("malformed line 2: err %v, stderr %q; want a failure naming %s: line 2", err, stderr.String(), passages)
	}
}
