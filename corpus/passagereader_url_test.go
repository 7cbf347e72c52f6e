package corpus

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every document's url passes the check on its way to passages: an http(s) one is kept, with
// its section anchors, any other removed and counted in the stats, its document kept.
func TestPassageReaderRemovesNonWebURLs(t *testing.T) {
	docs := []struct{ url, want string }{
		{"https://en.wikipedia.org/wiki/A", "https://en.wikipedia.org/wiki/A"},
		{"javascript:alert(1)", ""},
		{"data:text/html,x", ""},
		{" http://example.org/b ", "http://example.org/b"},
		{"file:///etc/passwd", ""},
		{"", ""},
		{"/wiki/Relative", ""},
	}
	var lines []string
	for i, d := range docs {
		lines = append(lines, `{"id":"d`+itoa(i)+`","title":"T","text":"some words here","url":"`+d.url+`"}`)
	}
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	split, _ := NewSplitter(SplitOptions{})
	ctx := context.Background()
	r, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pr := NewPassageReader(ctx, r, split, PassageReaderOptions{})
	defer pr.Close()
	for i := 0; ; i++ {
		_, ps, err := pr.Next(ctx)
		if err == io.EOF {
			if i != len(docs) {
				t.Errorf("%d documents, want %d", i, len(docs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].URL != docs[i].want {
			t.Errorf("document %d (%q): passages %+v, want url %q", i, docs[i].url, ps, docs[i].want)
		}
	}
	if st := pr.Stats(); st.URLsRemoved != 4 || st.Documents != len(docs) {
		t.Errorf("stats %+v, want 4 urls removed", st)
	}
}
