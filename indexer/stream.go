package indexer

import (
	"encoding/hex"
	"io"
	"os"
	"sync"

	"github.com/kairos-rag/kairos/internal/filesum"
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

// streamSum reads what is left of r (a format's reader may stop at its last record) and
// returns the sum of every byte read through it.
func streamSum(r *filesum.Reader) (FileSum, error) {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return FileSum{}, err
	}
	sum := r.Sum()
	return FileSum{Size: r.Size(), SHA256: hex.EncodeToString(sum[:])}, nil
}
