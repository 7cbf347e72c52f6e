package corpus

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// encodeUTF16 writes s as UTF-16 with its byte order mark.
func encodeUTF16(s string, bigEndian bool) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	var b []byte
	for _, u := range utf16.Encode([]rune("\uFEFF" + s)) {
		b = order.AppendUint16(b, u)
	}
	return b
}

// TestUTF16InputsNameTheEncoding: a JSON or CSV input saved as UTF-16 (Windows tools do) is
// refused with an error that names the file and the encoding, whatever the format detection
// or the option says, instead of "invalid character 'ÿ'" on its first record; MediaWiki XML
// in UTF-16 still opens, and UTF-8 with a byte order mark still reads.
func TestUTF16InputsNameTheEncoding(t *testing.T) {
	head := func(path string, lines int) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.SplitAfterN(string(b), "\n", lines+1)[:lines], "")
	}
	jsonl := head(scifactPath, 3)
	csv := head(faqPath, 3)
	dir := t.TempDir()
	tests := []struct {
		name, file string
		data       []byte
		format     string
		want       string // "" opens and reads three documents
	}{
		{"jsonl utf-16le", "a.jsonl", encodeUTF16(jsonl, false), "", "UTF-16 little-endian"},
		{"jsonl utf-16be", "b.jsonl", encodeUTF16(jsonl, true), "", "UTF-16 big-endian"},
		{"unknown extension", "c.txt", encodeUTF16(jsonl, false), "", "UTF-16 little-endian"},
		{"forced jsonl", "d.data", encodeUTF16(jsonl, false), FormatJSONL, "UTF-16 little-endian"},
		{"faq csv", "e.csv", encodeUTF16(csv, false), "", "UTF-16 little-endian"},
		{"utf-8 with bom", "f.jsonl", append([]byte("\uFEFF"), jsonl...), "", ""},
		{"json array with bom", "g.json", []byte("\uFEFF[" + strings.Join(strings.Split(strings.TrimSpace(jsonl), "\n"), ",\n") + "]"), "", ""},
		{"pretty json with bom", "h.json", []byte("\uFEFF" + strings.ReplaceAll(jsonl, `{"_id"`, "{\n \"_id\"")), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(context.Background(), path, Options{Format: tc.format})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Open: %v, want an error naming %s and %q", err, path, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n := 0
			for {
				_, err := r.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 3 {
				t.Errorf("read %d documents, want 3", n)
			}
		})
	}
	// MediaWiki XML may be UTF-16: it is not refused.
	xml := `<mediawiki><page><title>A</title><ns>0</ns><id>1</id><revision><text>Alpha is a letter.</text></revision></page></mediawiki>`
	path := filepath.Join(dir, "w.xml")
	if err := os.WriteFile(path, encodeUTF16(xml, false), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("UTF-16 MediaWiki XML refused: %v", err)
	}
	r.Close()
}
