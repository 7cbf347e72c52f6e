package corpus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dsbzip2 "github.com/dsnet/compress/bzip2"

	"github.com/kairos-rag/kairos/corpus/multistream"
)

// writeMultistream recompresses an XML dump as dir/name-multistream.xml.bz2 with pagesPer
// pages a stream, and its bzip2-compressed index beside it under Wikipedia's name when
// withIndex is set. It returns the dump's path and the index's.
func writeMultistream(t testing.TB, xml []byte, dir, name string, pagesPer int, withIndex bool) (string, string) {
	t.Helper()
	var dump, index bytes.Buffer
	if err := multistream.Write(context.Background(), &dump, &index, bytes.NewReader(xml), multistream.WriteOptions{PagesPerStream: pagesPer}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+"-multistream.xml.bz2")
	if err := os.WriteFile(path, dump.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ipath := multistream.IndexPath(path)
	if withIndex {
		var z bytes.Buffer
		zw, err := dsbzip2.NewWriter(&z, &dsbzip2.WriterConfig{Level: 9})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(index.Bytes()); err != nil || zw.Close() != nil {
			t.Fatal("compressing the index")
		}
		if err := os.WriteFile(ipath, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path, ipath
}

// ingest reads path to the end, splitting its documents, and prints every outcome (documents
// with their passages, errors) and the final stats. workers 1 is the sequential path:
// Open with one worker and Split called in turn; otherwise Open and a PassageReader run
// workers goroutines each.
func ingest(t testing.TB, path string, opts Options, workers int) (outcomes []string, stats string, passages int) {
	t.Helper()
	ctx := context.Background()
	opts.Workers = workers
	r, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	split, err := NewSplitter(SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := func() (Document, []Passage, error) {
		d, err := r.Next(ctx)
		if err != nil {
			return d, nil, err
		}
		return d, split.Split(d), nil
	}
	statsOf := r.Stats
	if workers != 1 {
		pr := NewPassageReader(ctx, r, split, PassageReaderOptions{Workers: workers})
		defer pr.Close()
		next = func() (Document, []Passage, error) { return pr.Next(ctx) }
		statsOf = pr.Stats
	}
	for range 1_000_000 {
		d, ps, err := next()
		if err != nil {
			outcomes = append(outcomes, "error: "+err.Error())
			if IsRecordError(err) {
				continue
			}
			st := statsOf()
			return outcomes, fmt.Sprintf("%+v", st), passages
		}
		passages += len(ps)
		outcomes = append(outcomes, fmt.Sprintf("%#v\n%#v", d, ps))
	}
	t.Fatal("no end")
	return
}

// TestOpenParallelMatchesSequential: reading and splitting with workers gives exactly the
// documents, passages, errors and stats of the sequential path, for a single-stream .bz2
// dump, a multistream one (with its index beside it, named by an option, or scanned) and
// plain XML.
func TestOpenParallelMatchesSequential(t *testing.T) {
	xml := readGensimDump(t, "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	dir := t.TempDir()
	indexed, _ := writeMultistream(t, xml, dir, "indexed", 10, true)
	scanned, _ := writeMultistream(t, xml, dir, "scanned", 7, false)
	// The same file, with its index under a name Open cannot guess.
	elsewhere, moved := filepath.Join(dir, "named-multistream.xml.bz2"), filepath.Join(dir, "moved-index.txt.bz2")
	if err := os.Link(indexed, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(multistream.IndexPath(indexed), moved); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "enwiki.xml")
	if err := os.WriteFile(plain, xml, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opts Options
	}{
		{"single-stream bz2", gensimEnwiki, Options{}},
		{"utf-16 bz2", gensimBgwiki, Options{}},
		{"multistream, index beside", indexed, Options{}},
		{"multistream, scanned", scanned, Options{}},
		{"multistream, index named", elsewhere, Options{MultistreamIndex: moved}},
		{"plain xml", plain, Options{}},
	}
	var want []string // every input holds the same pages: the outcomes must agree across inputs too
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Source = "sample" // the default, the file name, differs between the inputs
			seq, seqStats, passages := ingest(t, tt.path, tt.opts, 1)
			if passages == 0 {
				t.Fatal("no passages")
			}
			for _, workers := range []int{2, 4} {
				par, parStats, _ := ingest(t, tt.path, tt.opts, workers)
				if !slices.Equal(par, seq) {
					t.Errorf("%d workers: %d outcomes differ from the sequential %d", workers, len(par), len(seq))
				}
				if parStats != seqStats {
					t.Errorf("%d workers: stats\n%s\nwant\n%s", workers, parStats, seqStats)
				}
			}
			if tt.name == "utf-16 bz2" {
				return
			}
			if want == nil {
				want = seq
			} else if !slices.Equal(seq, want) {
				t.Errorf("documents differ from the first input's")
			}
		})
	}
}

// TestOpenMultistreamErrors: a damaged multistream dump or index fails with an error naming
// the file and the position.
func TestOpenMultistreamErrors(t *testing.T) {
	xml := readGensimDump(t, "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	dir := t.TempDir()
	path, ipath := writeMultistream(t, xml, dir, "bad", 10, true)
	offsets, err := multistream.ReadIndex(context.Background(), ipath)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[offsets[2]+300] ^= 0x40
	corrupt := filepath.Join(dir, "corrupt.xml.bz2")
	badIndex := filepath.Join(dir, "bad-index.txt")
	if os.WriteFile(corrupt, data, 0o644) != nil || os.WriteFile(badIndex, []byte("0:1:A\nx:2:B\n"), 0o644) != nil {
		t.Fatal("writing fixtures")
	}
	tests := []struct {
		name, path string
		opts       Options
		wantErr    string
	}{
		{"corrupt stream", corrupt, Options{Workers: 2}, fmt.Sprintf("%s: reading line 1414: %s: bzip2 stream at byte %d: bzip2 data invalid", corrupt, corrupt, offsets[2])},
		{"bad index", path, Options{Workers: 2, MultistreamIndex: badIndex}, path + ": reading its multistream index: " + badIndex + ": line 2: "},
		{"missing index", path, Options{Workers: 2, MultistreamIndex: filepath.Join(dir, "none.txt")}, path + ": reading its multistream index: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(context.Background(), tt.path, tt.opts)
			docs := 0
			for err == nil {
				_, err = r.Next(context.Background())
				docs++
			}
			if r != nil {
				r.Close()
			}
			if err == io.EOF || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("error %v after %d documents, want prefix %q", err, docs, tt.wantErr)
			}
			if IsRecordError(err) {
				t.Errorf("a damaged stream is a skippable record error: %v", err)
			}
		})
	}
}
