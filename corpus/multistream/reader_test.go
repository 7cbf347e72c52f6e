package multistream

import (
	"bytes"
	"compress/bzip2"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestReaderMatchesSequential: whatever the input's layout and the options, the text is the
// sequential bzip2 reader's, byte for byte.
func TestReaderMatchesSequential(t *testing.T) {
	loadSample(t)
	offsets, err := parseIndex(context.Background(), bytes.NewReader(sample.index), "index")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		data       []byte
		opts       Options
		streams    int // segments the pool decompresses; -1: at least 2
		sequential bool
	}{
		{"single stream", sample.raw, Options{}, 0, true},
		{"single stream, small cap", sample.raw, Options{MaxStreamBytes: 4096}, 0, true},
		{"multistream scanned", sample.multi, Options{}, -1, false},
		{"multistream scanned, 1 worker", sample.multi, Options{Workers: 1}, -1, false},
		{"multistream scanned, 7 workers", sample.multi, Options{Workers: 7}, -1, false},
		{"multistream indexed", sample.multi, Options{Offsets: offsets}, len(offsets) + 1, false},
		{"multistream, every other offset", sample.multi, Options{Offsets: everyOther(offsets)}, len(everyOther(offsets)) + 1, false},
		{"multistream goes sequential midway", sample.multi, Options{MaxStreamBytes: midwayCap(t, offsets)}, -1, true},
		{"multistream, segments over the pool's cap", sample.multi, Options{Offsets: offsets, MaxPooledBytes: 1000}, len(offsets) + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st, err := readAll(t, tt.data, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, sample.xml) {
				t.Fatalf("text differs from the sequential reader's: %d bytes, want %d", len(got), len(sample.xml))
			}
			if st.Sequential != tt.sequential || tt.streams >= 0 && st.Streams != tt.streams || tt.streams < 0 && st.Streams < 2 {
				t.Errorf("stats %+v, want %d streams, sequential %v", st, tt.streams, tt.sequential)
			}
			if st.Merged != 0 {
				t.Errorf("%d false stream starts in a well-formed file", st.Merged)
			}
			if over := st.Oversized > 0; over != (tt.opts.MaxPooledBytes > 0) {
				t.Errorf("%d segments decompressed again with MaxPooledBytes %d", st.Oversized, tt.opts.MaxPooledBytes)
			}
		})
	}
}

// midwayCap returns a MaxStreamBytes that the first streams (at least 3) fit in and a later
// one does not.
func midwayCap(t *testing.T, offsets []int64) int64 {
	ends := append(offsets[1:], int64(len(sample.multi)))
	biggest := offsets[0]
	for i := range ends {
		size := ends[i] - offsets[i]
		if i >= 3 && size > biggest {
			return biggest
		}
		biggest = max(biggest, size)
	}
	t.Fatal("no stream is bigger than all the streams before it")
	return 0
}

func everyOther(offs []int64) []int64 {
	var out []int64
	for i := 0; i < len(offs); i += 2 {
		out = append(out, offs[i])
	}
	return out
}

// TestWriteLayout: Write's file is Wikipedia's layout: a header stream, streams of the given
// number of pages, a trailer stream; its index names every page with its stream's offset.
func TestWriteLayout(t *testing.T) {
	loadSample(t)
	pages := bytes.Count(sample.xml, []byte("<page>"))
	lines := strings.Split(strings.TrimSpace(string(sample.index)), "\n")
	if len(lines) != pages {
		t.Fatalf("index has %d lines for %d pages", len(lines), pages)
	}
	if !strings.HasSuffix(lines[0], ":10:AccessibleComputing") {
		t.Errorf("first index line %q, want the page id and title of the first page", lines[0])
	}
	offsets, err := parseIndex(context.Background(), bytes.NewReader(sample.index), "index")
	if err != nil {
		t.Fatal(err)
	}
	if want := (pages + 9) / 10; len(offsets) != want {
		t.Errorf("%d streams of pages, want %d", len(offsets), want)
	}
	for i, off := range offsets {
		if !isStreamHeader(sample.multi[off:]) {
			t.Fatalf("offset %d (stream %d) is not a stream start", off, i)
		}
	}
	// The header stream holds <siteinfo> and no page; each page stream starts with a page.
	head, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(sample.multi[:offsets[0]])))
	if err != nil || !bytes.Contains(head, []byte("<siteinfo>")) || bytes.Contains(head, []byte("<page>")) {
		t.Errorf("header stream: %v, %d bytes, siteinfo %v", err, len(head), bytes.Contains(head, []byte("<siteinfo>")))
	}
	first, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(sample.multi[offsets[0]:offsets[1]])))
	if err != nil || bytes.Count(first, []byte("<page>")) != 10 || !bytes.HasPrefix(bytes.TrimSpace(first), []byte("<page>")) {
		t.Errorf("first page stream: %v, %d pages", err, bytes.Count(first, []byte("<page>")))
	}
}

// TestReaderFalseStreamStart: a segment cut inside a stream (what a false match of the stream
// magic would do) is decoded joined with the next one, and the text is unchanged.
func TestReaderFalseStreamStart(t *testing.T) {
	loadSample(t)
	offsets, err := parseIndex(context.Background(), bytes.NewReader(sample.index), "index")
	if err != nil {
		t.Fatal(err)
	}
	// Segments at the real starts, plus cuts inside streams 2 and 5 (two false starts in
	// stream 5, so that a join fails again before it succeeds).
	cuts := []int64{0}
	for i, off := range offsets {
		cuts = append(cuts, off)
		switch i {
		case 2:
			cuts = append(cuts, off+1000)
		case 5:
			cuts = append(cuts, off+500, off+3000)
		}
	}
	cuts = append(cuts, int64(len(sample.multi)))
	k := 0
	next := func() (segment, error) {
		if k+1 >= len(cuts) {
			return segment{}, io.EOF
		}
		k++
		return segment{data: sample.multi[cuts[k-1]:cuts[k]], off: cuts[k-1]}, nil
	}
	r := newReader(context.Background(), next, Options{File: "cut.bz2", Workers: 3})
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sample.xml) {
		t.Fatalf("text differs: %d bytes, want %d", len(got), len(sample.xml))
	}
	if st := r.Stats(); st.Merged != 3 {
		t.Errorf("stats %+v, want 3 joins", st)
	}
}

// TestReaderErrors: damaged input fails with an error naming the file and the offset of the
// stream at fault, after the text of the streams before it.
func TestReaderErrors(t *testing.T) {
	loadSample(t)
	offsets, err := parseIndex(context.Background(), bytes.NewReader(sample.index), "index")
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Clone(sample.multi)
	corrupt[offsets[3]+200] ^= 0x55
	tests := []struct {
		name    string
		data    []byte
		opts    Options
		wantErr string
		wantOut int // bytes of text that must come out first
	}{
		{"corrupt stream", corrupt, Options{File: "c.bz2"}, "c.bz2: bzip2 stream at byte " + itoa(offsets[3]) + ": ", textBefore(t, offsets[3])},
		{"truncated", sample.multi[:offsets[4]+300], Options{File: "t.bz2"}, "t.bz2: bzip2 stream at byte " + itoa(offsets[4]) + ": truncated input", textBefore(t, offsets[4])},
		{"truncated single stream", sample.raw[:len(sample.raw)/2], Options{File: "s.bz2"}, "s.bz2: bzip2 data before byte", 0},
		{"index offset inside a stream", sample.multi, Options{File: "i.bz2", Offsets: []int64{offsets[0], offsets[1] + 7}}, "i.bz2: index offset " + itoa(offsets[1]+7) + " is not the start of a bzip2 stream", 0},
		{"index offset past the end", sample.multi, Options{File: "p.bz2", Offsets: []int64{int64(len(sample.multi)) + 10}}, "p.bz2: index offset", 0},
		{"not bzip2", []byte("<mediawiki>not compressed</mediawiki>"), Options{File: "n.bz2"}, "n.bz2: not bzip2 data", 0},
		{"text too big", sample.multi, Options{File: "b.bz2", MaxDecodedBytes: 1000}, "b.bz2: bzip2 stream at byte 0: more than 1000 bytes", 0},
		{"text too big, over the pool's cap first", sample.multi, Options{File: "b.bz2", MaxDecodedBytes: 1000, MaxPooledBytes: 500}, "b.bz2: bzip2 stream at byte 0: more than 1000 bytes of text (MaxDecodedBytes)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := readAll(t, tt.data, tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want prefix %q", err, tt.wantErr)
			}
			if len(got) < tt.wantOut || !bytes.Equal(got[:tt.wantOut], sample.xml[:tt.wantOut]) {
				t.Errorf("%d bytes of text before the error, want the first %d of the dump", len(got), tt.wantOut)
			}
		})
	}
}

// textBefore is the length of the text of the streams before offset off of the multistream
// sample.
func textBefore(t *testing.T, off int64) int {
	text, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(sample.multi[:off])))
	if err != nil {
		t.Fatal(err)
	}
	return len(text)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
