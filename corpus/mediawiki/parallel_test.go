package mediawiki

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus/document"
)

// outcome is what one call of Next gave.
type outcome struct {
	doc string // the document, printed
	err string
}

// drain calls Next until a fatal error (io.EOF included) and returns every outcome and the
// final stats.
func drain(t *testing.T, r *Reader) ([]outcome, string) {
	t.Helper()
	defer r.Close()
	var out []outcome
	for range 100_000 {
		d, err := r.Next(context.Background())
		if err != nil {
			out = append(out, outcome{err: err.Error()})
			if document.IsRecordError(err) {
				continue
			}
			st := r.Stats()
			return out, fmtStats(st.Documents, st.Bad, st.Repaired, st.BytesRead, st.Skipped, st.Languages)
		}
		out = append(out, outcome{doc: fmtDoc(d)})
	}
	t.Fatal("reader did not end")
	return nil, ""
}

// TestParallelMatchesSequential: with workers, a reader returns the same documents, errors
// and stats in the same order as without, on the real dumps, on broken input and on a
// truncated dump.
func TestParallelMatchesSequential(t *testing.T) {
	enwiki := readDump(t, enwikiDump)
	cut := bytes.Index(enwiki, []byte("<title>Albedo</title>")) + 100
	inputs := []struct {
		name    string
		data    []byte
		maxPage int64
	}{
		{name: "enwiki", data: enwiki},
		{name: "tables", data: readDump(t, tableDump)},
		{name: "bgwiki utf-16", data: readDump(t, bgwikiDump)},
		{name: "broken pages", data: []byte(strings.ReplaceAll(brokenFixture, `\xff`, "\xff"))},
		{name: "truncated inside a page", data: enwiki[:cut]},
		{name: "not a dump", data: []byte(`{"id": 1}`)},
		{name: "oversized page", maxPage: 4096, data: []byte("<mediawiki><page><title>Big</title><ns>0</ns><id>1</id><revision><text>" +
			strings.Repeat("a", 5000) + "</text></revision></page><page><title>Small</title><ns>0</ns><id>2</id>" +
			"<revision><text>ok</text></revision></page></mediawiki>")},
	}
	for _, in := range inputs {
		seq, seqStats := drain(t, New(bytes.NewReader(in.data), Options{File: "f.xml", Source: "s", MaxPageBytes: in.maxPage}))
		if len(seq) < 2 && in.name != "not a dump" {
			t.Fatalf("%s: sequential reader returned %d outcomes", in.name, len(seq))
		}
		for _, workers := range []int{2, 3, 8} {
			par, parStats := drain(t, New(bytes.NewReader(in.data), Options{File: "f.xml", Source: "s", MaxPageBytes: in.maxPage, Workers: workers}))
			if !reflect.DeepEqual(par, seq) {
				t.Errorf("%s, %d workers: outcomes differ from the sequential reader's (%d vs %d)", in.name, workers, len(par), len(seq))
				for i := range min(len(par), len(seq)) {
					if par[i] != seq[i] {
						t.Errorf("first difference at %d:\n got %.200q\nwant %.200q", i, par[i], seq[i])
						break
					}
				}
			}
			if parStats != seqStats {
				t.Errorf("%s, %d workers: stats %s, want %s", in.name, workers, parStats, seqStats)
			}
		}
	}
}

// TestParallelCloseEarly: closing a reader with workers before the end stops them, and Next
// fails from then on.
func TestParallelCloseEarly(t *testing.T) {
	r := New(bytes.NewReader(readDump(t, enwikiDump)), Options{Workers: 3})
	for range 2 {
		if _, err := r.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(context.Background()); err == nil || err == io.EOF {
		t.Fatalf("Next after Close: %v", err)
	}
	if st := r.Stats(); st.Documents != 2 {
		t.Errorf("stats count %d documents, want the 2 returned", st.Documents)
	}
}
