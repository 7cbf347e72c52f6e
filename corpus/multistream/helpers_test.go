package multistream

import (
	"bytes"
	"compress/bzip2"
	"context"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// enwikiDump is the shared sample of English Wikipedia: one bzip2 stream of 5.8 MB of XML.
const enwikiDump = "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

var sample struct {
	once       sync.Once
	raw        []byte // the single-stream .bz2 file
	xml        []byte // its text
	multi      []byte // the text recompressed by Write, 10 pages a stream
	index      []byte // Write's index of multi
	err        error
	rawOffsets []int64
}

// loadSample reads the shared dump and recompresses it as a multistream file, once per run.
func loadSample(t testing.TB) {
	t.Helper()
	path := sharedtest.Path(t, enwikiDump)
	sample.once.Do(func() {
		sample.raw, sample.err = os.ReadFile(path)
		if sample.err != nil {
			return
		}
		sample.xml, sample.err = io.ReadAll(bzip2.NewReader(bytes.NewReader(sample.raw)))
		if sample.err != nil {
			return
		}
		var multi, index bytes.Buffer
		sample.err = Write(context.Background(), &multi, &index, bytes.NewReader(sample.xml), WriteOptions{PagesPerStream: 10})
		sample.multi, sample.index = multi.Bytes(), index.Bytes()
	})
	if sample.err != nil {
		t.Fatal(sample.err)
	}
}

// readAll decompresses data with a Reader and returns the text, the error and the stats.
func readAll(t testing.TB, data []byte, opts Options) ([]byte, Stats, error) {
	t.Helper()
	r, err := NewReader(context.Background(), bytes.NewReader(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	return out, r.Stats(), err
}
