package postings

import (
	"context"
	"reflect"
	"testing"
)

// TestLongPassagesScoreExactly: passages of 255 tokens and more, whose length the one-byte
// table cannot hold (lenEscape), are read from the file's four-byte lengths, so they score as
// the exhaustive search scores them; every length reads back as written.
func TestLongPassagesScoreExactly(t *testing.T) {
	const vocab = 800
	c := newZipfCorpus(5, 2000, vocab)
	for i := range c.docs {
		switch i % 4 {
		case 1: // a long passage: 250 to 700 tokens
			for want := 250 + (i*7)%451; len(c.docs[i]) < want; {
				c.docs[i] = append(c.docs[i], c.docs[i][:min(len(c.docs[i]), want-len(c.docs[i]))]...)
			}
		case 2: // the lengths around the escape
			for len(c.docs[i]) < 254+i%3 {
				c.docs[i] = append(c.docs[i], c.docs[i][0])
			}
			c.docs[i] = c.docs[i][:254+i%3]
		}
	}
	seg := c.build(t, tempPath(t, "long.kpst"), BuilderOptions{}, nil)
	escaped := 0
	for ord := range c.docs {
		if got := seg.length(uint32(ord)); got != uint32(len(c.docs[ord])) {
			t.Fatalf("length(%d) = %d, want %d", ord, got, len(c.docs[ord]))
		}
		if seg.lens8[ord] == lenEscape {
			escaped++
		}
	}
	if escaped < 300 {
		t.Fatalf("%d passages escaped to the four-byte lengths: the case tests too little", escaped)
	}
	x, err := NewSearcher([]*Segment{seg}, SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc := c.scoring()
	for qi, terms := range c.queries(9, 200, 6, vocab) {
		q := Query{Terms: terms, K: 10}
		got, err := x.Search(context.Background(), q, sc)
		if err != nil {
			t.Fatal(err)
		}
		if want := c.exhaustive(q, sc); !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d %q:\n got %v\nwant %v", qi, terms, got, want)
		}
	}
}
