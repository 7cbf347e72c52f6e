package filesum_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kairos-rag/kairos/internal/filesum"
)

// TestWriter: the size and sum are those of the bytes that reached the underlying writer,
// written in pieces.
func TestWriter(t *testing.T) {
	for _, pieces := range [][]string{nil, {""}, {"a"}, {"postings", " ", "segment"}} {
		t.Run(fmt.Sprint(len(pieces)), func(t *testing.T) {
			var out bytes.Buffer
			w := filesum.New(&out)
			for _, p := range pieces {
				if _, err := w.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if w.Size() != int64(out.Len()) || w.Sum() != sha256.Sum256(out.Bytes()) {
				t.Fatalf("size %d sum %x; written %d bytes, sum %x", w.Size(), w.Sum(), out.Len(), sha256.Sum256(out.Bytes()))
			}
		})
	}
}

func TestReader(t *testing.T) {
	for _, in := range []string{"", "a", strings.Repeat("postings segment ", 5000)} {
		r := filesum.NewReader(strings.NewReader(in))
		got, err := io.ReadAll(iotest.OneByteReader(r))
		if err != nil || string(got) != in {
			t.Fatalf("read %d of %d bytes: %v", len(got), len(in), err)
		}
		if r.Size() != int64(len(in)) || r.Sum() != sha256.Sum256([]byte(in)) {
			t.Errorf("size %d sum %x; read %d bytes, sum %x", r.Size(), r.Sum(), len(in), sha256.Sum256([]byte(in)))
		}
	}
}

func ExampleWriter() {
	var out bytes.Buffer
	w := filesum.New(&out)
	fmt.Fprint(w, "abc")
	fmt.Printf("%d bytes, sha256 %x\n", w.Size(), w.Sum())
	// Output: 3 bytes, sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
}
