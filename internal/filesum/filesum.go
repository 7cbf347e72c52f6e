// Package filesum counts and hashes (sha256) the bytes of a file as they are written (or read,
// for an input read once), so that
// a generation's manifest records the file's size and sum without reading it back: the
// passage store, the postings segments and the document table of a 40M-passage build are
// tens of gigabytes, and each checkpoint read its new ones again.
package filesum

import (
	"crypto/sha256"
	"hash"
	"io"
)

// sum is what a Writer and a Reader keep of the bytes that passed: their count and hash.
type sum struct {
	h hash.Hash
	n int64
}

func (s *sum) add(p []byte) {
	s.h.Write(p)
	s.n += int64(len(p))
}

// Size is the number of bytes that passed.
func (s *sum) Size() int64 { return s.n }

// Sum is the sha256 of the bytes that passed.
func (s *sum) Sum() [sha256.Size]byte {
	var out [sha256.Size]byte
	s.h.Sum(out[:0])
	return out
}

// Writer passes what it is given to an io.Writer, counting and hashing what that took.
type Writer struct {
	w io.Writer
	sum
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w, sum: sum{h: sha256.New()}} }

func (s *Writer) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.add(p[:n])
	return n, err
}

// Reader reads from an io.Reader, counting and hashing what it read: the sum of an input that
// can be read only once, such as a pipe, taken as it is read.
type Reader struct {
	r io.Reader
	sum
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r, sum: sum{h: sha256.New()}} }

func (s *Reader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.add(p[:n])
	return n, err
}
