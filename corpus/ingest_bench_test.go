package corpus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// syntheticCopies is how many times the synthetic dump repeats the shared sample's pages:
// 10 copies are 58 MB of XML, 2,060 pages.
const syntheticCopies = 10

var firstID = regexp.MustCompile(`<id>(\d+)</id>`)

// repeatDump returns a dump with the pages of xml repeated copies times, each copy with its
// own page ids (id + k*10,000,000) and titles (" (copy k)"), so that no two documents share an
// id. xml must be laid out one tag a line, as MediaWiki exports are.
func repeatDump(t testing.TB, xml []byte, copies int) []byte {
	start := bytes.Index(xml, []byte("  <page>"))
	end := bytes.LastIndex(xml, []byte("</page>")) + len("</page>\n")
	if start < 0 || end < start {
		t.Fatal("no pages")
	}
	var out bytes.Buffer
	out.Grow(len(xml) * copies)
	out.Write(xml[:start])
	pages := bytes.SplitAfter(xml[start:end], []byte("</page>\n"))
	for k := range copies {
		for _, p := range pages {
			if len(p) == 0 {
				continue
			}
			if k > 0 {
				loc := firstID.FindSubmatchIndex(p)
				var id int
				fmt.Sscan(string(p[loc[2]:loc[3]]), &id)
				p = append(append(append([]byte{}, p[:loc[2]]...), fmt.Sprint(id+k*10_000_000)...), p[loc[3]:]...)
				p = bytes.Replace(p, []byte("</title>"), fmt.Appendf(nil, " (copy %d)</title>", k), 1)
			}
			out.Write(p)
		}
	}
	out.Write(xml[end:])
	return out.Bytes()
}

// BenchmarkIngestMediaWiki measures the corpus side of `kairos index` on .bz2 MediaWiki
// dumps, end to end: decompression, page decoding, wikitext cleaning and splitting into
// passages (no indexing), as passages/s of wall time and passages per CPU-second. "sequential" reads with one worker and splits in
// turn; "parallel" uses GOMAXPROCS workers for decompression, decoding and splitting (run it
// with -cpu 2 for the 2-core figure). Inputs: the shared sample as published (one bzip2
// stream: its decompression cannot be split), the sample recompressed as a multistream dump
// (100 pages a stream, as Wikipedia's), and a synthetic multistream dump of the sample's pages
// repeated syntheticCopies times (58 MB of XML).
func BenchmarkIngestMediaWiki(b *testing.B) {
	xml := readGensimDump(b, "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	dir := b.TempDir()
	sampleMulti, _ := writeMultistream(b, xml, dir, "sample", 100, true)
	synthetic, _ := writeMultistream(b, repeatDump(b, xml, syntheticCopies), dir, "synthetic", 100, true)
	for _, in := range []struct{ name, path string }{
		{"sample-single-stream", gensimEnwiki},
		{"sample-multistream", sampleMulti},
		{"synthetic-multistream", synthetic},
	} {
		for _, mode := range []struct {
			name    string
			workers int
		}{{"sequential", 1}, {"parallel", 0}} {
			b.Run(in.name+"/"+mode.name, func(b *testing.B) {
				passages := 0
				cpu0 := processCPU(b)
				for b.Loop() {
					passages += ingestCount(b, in.path, mode.workers)
				}
				b.ReportMetric(float64(passages)/b.Elapsed().Seconds(), "passages/s")
				// CPU time of the whole process: on a machine shared with other work, wall
				// time says how much CPU this run got; this says how much it needed.
				b.ReportMetric(float64(passages)/(processCPU(b)-cpu0).Seconds(), "passages/cpu-s")
			})
		}
	}
}

// processCPU is the user and system CPU time the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ingestCount reads and splits path as `kairos index` does and returns the passages.
func ingestCount(b *testing.B, path string, workers int) int {
	ctx := context.Background()
	r, err := Open(ctx, path, Options{Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	split, err := NewSplitter(SplitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	if workers == 1 {
		for {
			d, err := r.Next(ctx)
			if err == io.EOF {
				return n
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(split.Split(d))
		}
	}
	pr := NewPassageReader(ctx, r, split, PassageReaderOptions{Workers: workers})
	defer pr.Close()
	for {
		_, ps, err := pr.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += len(ps)
	}
}

// TestRepeatDumpIDsAreDistinct: the synthetic dump has the sample's documents times the
// copies, with distinct ids, and reads without errors.
func TestRepeatDumpIDsAreDistinct(t *testing.T) {
	xml := readGensimDump(t, "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
	r := NewMediaWikiReader(bytes.NewReader(repeatDump(t, xml, 3)), "synthetic.xml", "")
	seen := map[string]bool{}
	for {
		d, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[d.ID] {
			t.Fatalf("id %s twice", d.ID)
		}
		seen[d.ID] = true
	}
	if len(seen) != 3*106 {
		t.Errorf("%d documents, want %d", len(seen), 3*106)
	}
}
