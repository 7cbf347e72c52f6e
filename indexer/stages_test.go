package indexer

import (
	"bytes"
	"compress/bzip2"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus/multistream"
)

// TestBuildStages: a build of a MediaWiki dump reports each stage's busy time and work, and
// the work matches what was read and written: the dump's text for decompression, its pages
// for parsing, the passages for splitting, indexing and writing, the documents for batching. It runs
// on the shared sample as it is (one bzip2 stream, decompressed sequentially) and recompressed
// as a multistream dump with its index (decompressed on a pool).
func TestBuildStages(t *testing.T) {
	raw, err := os.ReadFile(shared(t, enwiki))
	if err != nil {
		t.Fatal(err)
	}
	xml, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	pages := int64(bytes.Count(xml, []byte("<page>")))
	multi := filepath.Join(t.TempDir(), "enwiki-multistream.xml.bz2")
	if err := multistream.Create(context.Background(), multi, bytes.NewReader(xml), multistream.WriteOptions{PagesPerStream: 20}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		input   string
		streams int64 // decompressed on the pool; 0: sequentially
	}{
		{"single stream", shared(t, enwiki), 0},
		{"multistream", multi, (pages + 19) / 20},
	} {
		if runtime.GOMAXPROCS(0) == 1 {
			// One core: the caller's goroutine reads alone and no pool decompresses
			// (corpus.OpenOptions.Workers).
			tc.streams = 0
		}
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name == "single stream" {
				t.Skip("-short: the multistream dump, whose streams a pool decompresses, runs alone")
			}
			sum := build(t, filepath.Join(t.TempDir(), "idx"), tc.input)
			st := sum.Stages
			if st == nil {
				t.Fatal("summary has no stages")
			}
			c := sum.Counts
			// The pool also decompresses the header stream; the index does not locate the
			// trailer's, which goes with the last stream of pages.
			if tc.streams > 0 && st.Decompress.Items != tc.streams+1 || tc.streams == 0 && st.Decompress.Items != 0 {
				t.Errorf("decompress: %d streams, want %d of pages and the header", st.Decompress.Items, tc.streams)
			}
			checks := []struct {
				stage       string
				got         StageTime
				items, size int64
			}{
				{"decompress", st.Decompress, st.Decompress.Items, int64(len(xml))},
				{"parse", st.Parse, pages, -1},
				{"split", st.Split, int64(c.Passages), 0},
				{"batch", st.Batch, int64(c.Documents), 0},
				{"index", st.Index, int64(c.Passages), 0},
				{"write", st.Write, int64(c.Passages), 0},
			}
			// Busy time is summed over goroutines: at most the wall time on each of them (the
			// pools are GOMAXPROCS wide; a scan, reader and writer goroutine run beside them).
			most := time.Duration(runtime.GOMAXPROCS(0)+1) * sum.Elapsed
			for _, k := range checks {
				if k.got.Busy <= 0 || k.got.Busy > most {
					t.Errorf("%s: busy %v for a build of %v", k.stage, k.got.Busy, sum.Elapsed)
				}
				if k.got.Items != k.items {
					t.Errorf("%s: %d items, want %d", k.stage, k.got.Items, k.items)
				}
				if k.size >= 0 && k.got.Bytes != k.size {
					t.Errorf("%s: %d bytes, want %d", k.stage, k.got.Bytes, k.size)
				}
			}
			if st.Parse.Bytes < int64(len(xml))/2 || st.Parse.Bytes > int64(len(xml)) {
				t.Errorf("parse: %d bytes of pages in %d of XML", st.Parse.Bytes, len(xml))
			}
		})
	}
}
