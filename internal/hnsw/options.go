package hnsw

import (
	"fmt"
	"runtime"
)

// Metric selects how vectors are compared. Both score by dot product; they differ in whether the
// index normalises what it is given.
type Metric uint8

const (
	// Cosine (the default) L2-normalises every added vector and every query, so the score is the
	// cosine similarity in [-1, 1]. Safe for embeddings whether or not the encoder normalised them.
	Cosine Metric = iota
	// Dot uses vectors as given: the score is the raw inner product. Use it only when the vectors
	// are already normalised (it skips one pass over each query) or when inner product is wanted.
	Dot
)

func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Dot:
		return "dot"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// Options configures a Graph. The zero value of every field means "use the default". The JSON
// form (an index manifest records it) holds the parameters that shape the graph; Metric is
// recorded in the graph file, and Workers does not change what is built with Workers 1.
type Options struct {
	// M is the number of neighbours kept per node on the upper levels; level 0 keeps 2*M.
	// Larger M raises recall and memory use. Default 16, range 2..256.
	M int `json:"m"`
	// EfConstruction is the candidate-list size while inserting. Larger builds a better graph,
	// more slowly. Default 200; at least M.
	EfConstruction int `json:"ef_construction"`
	// EfSearch is the candidate-list size Search uses when called with ef <= 0. Default 64.
	// It is raised to k when smaller.
	EfSearch int `json:"ef_search"`
	// Seed drives the random level of each node. With Workers == 1, the same Seed, keys, vectors
	// and Add batches build the same graph byte for byte.
	Seed int64 `json:"seed"`
	// Metric is Cosine (default) or Dot.
	Metric Metric `json:"-"`
	// Codes is the compact form of the vectors that a mapped search walks (LoadOptions.Mapped):
	// CodesInt8 (the default, written "" in JSON) or CodesBinary. Save writes the one-byte codes
	// always and, for CodesBinary, one bit per dimension besides; the graph file records the
	// choice. The in-memory graph searches the float vectors whatever Codes says.
	Codes string `json:"codes,omitempty"`
	// Build is what the graph is built from: BuildFloat (the default, "") keeps every float32
	// vector in memory and compares them; BuildCodes keeps one byte per dimension in memory
	// (each vector with its own range, buildcodes.go) and builds the graph on those, while the
	// float vectors go to a file in SpillDir as they arrive, read back only by Save, exact
	// search and the final rescoring of a search. Memory per vector drops from 4*dim bytes to
	// dim+8; the file is the same either way.
	Build string `json:"build,omitempty"`
	// SpillDir is the directory of the float vectors' file of a BuildCodes graph (an unlinked
	// temporary file: nothing is left behind). Default os.TempDir().
	SpillDir string `json:"-"`
	// Workers is the number of goroutines inserting in parallel within one Add call.
	// Default runtime.GOMAXPROCS(0). Parallel insertion is not deterministic.
	Workers int `json:"-"`
}

// The values of Options.Codes.
const (
	// CodesInt8: one byte per dimension (quant.go); the walk scores float query by byte code.
	CodesInt8 = "int8"
	// CodesBinary: one bit per dimension, set where the vector is above that dimension's mean
	// (binary.go); the walk scores by Hamming distance to the query's bits, and the candidates
	// are rescored with the one-byte codes and then the float vectors.
	CodesBinary = "binary"
)

// The values of Options.Build.
const (
	// BuildFloat: the graph is built on the float32 vectors, all held in memory.
	BuildFloat = "float"
	// BuildCodes: the graph is built on one-byte codes with a range per vector; the floats are
	// kept on disk only.
	BuildCodes = "codes"
)

// Defaults.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
)

// SetDefaults replaces the zero fields of o by their defaults (DefaultM, DefaultEfConstruction,
// DefaultEfSearch, GOMAXPROCS workers), the ones New applies: command lines call it on a copy
// to show them.
func (o *Options) SetDefaults() {
	if o.M == 0 {
		o.M = DefaultM
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = DefaultEfConstruction
	}
	if o.EfSearch == 0 {
		o.EfSearch = DefaultEfSearch
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Codes == CodesInt8 { // the default is recorded as "", as manifests before binary codes have it
		o.Codes = ""
	}
}

// CodesKind names o.Codes with its default filled in: CodesInt8 or CodesBinary (or an invalid
// value as given).
func (o Options) CodesKind() string {
	if o.Codes == "" {
		return CodesInt8
	}
	return o.Codes
}

// BuildKind names o.Build with its default filled in: BuildFloat or BuildCodes.
func (o Options) BuildKind() string {
	if o.Build == "" {
		return BuildFloat
	}
	return o.Build
}

// Validate reports the first invalid field, after defaults are applied.
func (o Options) Validate() error {
	o.SetDefaults()
	switch {
	case o.M < 2 || o.M > 256:
		return fmt.Errorf("hnsw: M %d out of range 2..256", o.M)
	case o.EfConstruction < o.M:
		return fmt.Errorf("hnsw: EfConstruction %d below M %d", o.EfConstruction, o.M)
	case o.EfSearch < 1:
		return fmt.Errorf("hnsw: EfSearch %d must be positive", o.EfSearch)
	case o.Metric != Cosine && o.Metric != Dot:
		return fmt.Errorf("hnsw: unknown metric %v", o.Metric)
	case o.Workers < 1:
		return fmt.Errorf("hnsw: Workers %d must be positive", o.Workers)
	case o.Build != "" && o.Build != BuildFloat && o.Build != BuildCodes:
		return fmt.Errorf("hnsw: build %q: want %s or %s", o.Build, BuildFloat, BuildCodes)
	case o.Codes != "" && o.Codes != CodesBinary:
		return fmt.Errorf("hnsw: codes %q: want %s or %s", o.Codes, CodesInt8, CodesBinary)
	}
	return nil
}
