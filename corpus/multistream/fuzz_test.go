package multistream

import (
	"bytes"
	"compress/bzip2"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

// FuzzReader: on any input the Reader fails cleanly or agrees with the sequential reader;
// when the sequential reader decodes the input, the Reader gives the same text.
func FuzzReader(f *testing.F) {
	var two bytes.Buffer
	if err := Write(context.Background(), &two, nil, strings.NewReader("<mediawiki>\n<page>\n<title>A</title>\n</page>\n<page>\n<title>B</title>\n</page>\n</mediawiki>\n"), WriteOptions{PagesPerStream: 1}); err != nil {
		f.Fatal(err)
	}
	f.Add(two.Bytes())
	f.Add(two.Bytes()[:len(two.Bytes())/2])
	f.Add([]byte("BZh91AY&SY"))
	f.Add([]byte("BZh9"))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := io.ReadAll(io.LimitReader(bzip2.NewReader(bytes.NewReader(data)), 1<<20))
		for _, opts := range []Options{{Workers: 2, MaxDecodedBytes: 1 << 20}, {Workers: 2, MaxStreamBytes: 64, MaxDecodedBytes: 1 << 20}} {
			r, err := NewReader(context.Background(), bytes.NewReader(data), opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(io.LimitReader(r, 1<<20))
			r.Close()
			if wantErr == nil && len(want) < 1<<20 && (err != nil || !bytes.Equal(got, want)) {
				t.Fatalf("opts %+v: %d bytes, %v; the sequential reader gives %d bytes", opts, len(got), err, len(want))
			}
		}
	})
}

func FuzzParseIndex(f *testing.F) {
	f.Add("597:10:AccessibleComputing\n597:12:Anarchism\n683:13:AfghanistanHistory\n")
	f.Add("x:1:A\n")
	f.Add("5:1\n3:2\n")
	f.Fuzz(func(t *testing.T, text string) {
		offs, err := parseIndex(context.Background(), strings.NewReader(text), "i.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "i.txt: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for i := 1; i < len(offs); i++ {
			if offs[i] <= offs[i-1] {
				t.Fatalf("offsets not strictly ascending: %v", offs)
			}
		}
	})
}

func TestParseIndex(t *testing.T) {
	tests := []struct {
		name, text string
		want       []int64
		wantErr    string
	}{
		{"wikipedia lines", "597:10:AccessibleComputing\n597:12:Anarchism\n683:13:Afghan: history\n", []int64{597, 683}, ""},
		{"no final newline, blank lines", "5:1:A\n\n9:2:B", []int64{5, 9}, ""},
		{"title with colons", "7:3:Help:Contents:x\n", []int64{7}, ""},
		{"not a number", "597:10:A\nabc:11:B\n", nil, "i.txt: line 2: \"abc:11:B\" does not start with a byte offset"},
		{"negative", "-5:1:A\n", nil, "i.txt: line 1: "},
		{"descending", "900:1:A\n800:2:B\n", nil, "i.txt: line 2: offset 800 is before the previous one (900)"},
		{"empty", "\n\n", nil, "i.txt: no offsets"},
		{"a title longer than the buffer", "597:1:" + strings.Repeat("x", 70_000) + "\n1200:2:B\n", []int64{597, 1200}, ""},
		{"a title longer than the buffer, last", "597:1:A\n1200:2:" + strings.Repeat("x", 200_000), []int64{597, 1200}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseIndex(context.Background(), strings.NewReader(tt.text), "i.txt")
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestIndexPath(t *testing.T) {
	for in, want := range map[string]string{
		"/d/enwiki-20240601-pages-articles-multistream.xml.bz2": "/d/enwiki-20240601-pages-articles-multistream-index.txt.bz2",
		"enwiki-latest-pages-articles.xml.bz2":                  "",
		"x.xml":                                                 "",
	} {
		if got := IndexPath(in); got != want {
			t.Errorf("IndexPath(%q) = %q, want %q", in, got, want)
		}
	}
}
