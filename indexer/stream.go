package indexer

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"sync"
)

// IsStream reports whether the input at path can be read only once: standard input ("-") or
// a pipe, socket or device. Such an input is read by the build alone: detecting its language
// ahead or hashing it beside the build, as a file's is, would take its bytes away from the
// build's reader. Its language is therefore not detected ahead (the build takes the default,
// and checkLanguage stops it at the first document in another language, naming
// --language), and the reader hashes it as it reads it (streamSums).
func IsStream(path string) bool {
	if path == "-" {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// streamSums holds the sums of a build's stream inputs, each set by the reader once it has
// read that input to its end. A checkpoint taken before then records the input without a
// sum, and such a checkpoint cannot be resumed (checkpointMatches).
type streamSums struct {
	mu   sync.Mutex
	sums map[int]FileSum // by input index
}

func (s *streamSums) set(i int, sum FileSum) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sums == nil {
		s.sums = map[int]FileSum{}
	}
	s.sums[i] = sum
}

// get returns input i's sum, the zero FileSum while it is being read.
func (s *streamSums) get(i int) FileSum {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sums[i]
}

// hashingReader hashes and counts what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newHashingReader(r io.Reader) *hashingReader { return &hashingReader{r: r, h: sha256.New()} }

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

// sum reads what is left (a format's reader may stop at its last record) and returns the
// sum of every byte.
func (h *hashingReader) sum() (FileSum, error) {
	if _, err := io.Copy(io.Discard, h); err != nil {
		return FileSum{}, err
	}
	return FileSum{Size: h.n, SHA256: hex.EncodeToString(h.h.Sum(nil))}, nil
}
