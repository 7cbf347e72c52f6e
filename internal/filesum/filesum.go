// Package filesum counts and hashes (sha256) the bytes of a file as they are written, so that
// a generation's manifest records the file's size and sum without reading it back: the
// passage store, the postings segments and the document table of a 40M-passage build are
// tens of gigabytes, and each checkpoint read its new ones again.
package filesum

import (
	"crypto/sha256"
	"hash"
	"io"
)

// Writer passes what it is given to an io.Writer, counting and hashing what that took.
type Writer struct {
	w io.Writer
	h hash.Hash
	n int64
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w, h: sha256.New()} }

func (s *Writer) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// Size is the number of bytes written.
func (s *Writer) Size() int64 { return s.n }

// Sum is the sha256 of the bytes written.
func (s *Writer) Sum() [sha256.Size]byte {
	var sum [sha256.Size]byte
	s.h.Sum(sum[:0])
	return sum
}
