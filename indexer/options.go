package indexer

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/ivf"
	"github.com/kairos-rag/kairos/internal/postings"
)

// InputSpec is one corpus input of a build.
type InputSpec struct {
	Path    string
	Options corpus.Options // format, source, FAQ columns
}

// Options configure Build.
type Options struct {
	// Dir is the location of the index (a directory, created when missing, or a qdrant://
	// location) for Build, the function; an Index's methods set it to the index's.
	Dir    string
	Inputs []InputSpec // read in order
	Build  BuildOptions
	// Encoder, when set, embeds every passage; the vectors go into an HNSW graph beside the
	// BM25 index, and the model's identity into the manifest.
	Encoder PassageEncoder
	// HNSW configures the graph (zero: hnsw defaults, seed 1).
	HNSW hnsw.Options
	// VectorIndex names the kind of dense index of a new index: VectorIndexHNSW (the graph)
	// or VectorIndexIVF (the inverted file, whose memory is bounded by one-bit codes and whose
	// build is linear in the passages). "" chooses by size: the inverted file from
	// DefaultIVFFrom passages when the build knows how many it embeds (a --bm25-first build,
	// the default, embeds the passages of its BM25 generation), the graph otherwise. The
	// manifest records it; updates, resumed builds and compactions keep the index's.
	VectorIndex string
	// IVF configures a new inverted file (zero: ivf's defaults, lists chosen by size).
	IVF ivf.Options
	// Engines replace the engines the index's store hands a writer, those set (tests wrap
	// them to watch them).
	Engines Engines
	// SkipBad skips malformed records (counted and listed in the Summary) instead of failing.
	SkipBad bool
	// MaxBadListed bounds Summary.BadRecords. 0 means DefaultMaxBadListed.
	MaxBadListed int
	// CheckpointEvery is how many passages a build writes between checkpoint generations
	// (complete generations named by the store's checkpoint record, not live) that Resume
	// continues a build that died from. 0 means DefaultCheckpointEvery; negative, no
	// checkpoints. With an encoder the interval grows to a tenth of the passages written,
	// since each checkpoint rewrites the HNSW graph file.
	CheckpointEvery int
	// CheckpointAfter also makes each checkpoint wait until this long has passed since the
	// build started or last checkpointed. A checkpoint costs a lexical segment that searches
	// then visit, and a rewrite of the document table (and graph), so at tens of thousands of
	// passages a second a count alone would checkpoint every few seconds; the time bounds what
	// a crash loses instead. A local build with an encoder checkpoints on time alone (every
	// CheckpointAfter, whatever the count): embedding is slow enough that the count may never
	// be reached. 0 means DefaultCheckpointAfter; negative, no least time (the count alone).
	CheckpointAfter time.Duration
	// EmbedInline embeds the passages of a build with an encoder as they are written, into
	// the one generation the build commits: nothing is live until the end. The zero value
	// builds lexical first: the passages and their BM25 index are committed first, as a
	// generation that is live (searchable with BM25) at once, then the vectors, embedded from
	// that generation's passages, as the next generation; interrupted while embedding, the
	// build leaves the BM25 index live, and Resume embeds without reading the inputs again.
	EmbedInline bool
	// Progress receives a status line about once a second; nil for none.
	Progress io.Writer
	Logger   *slog.Logger // nil: silent
	Version  string       // of the program, recorded in the manifest; "": version.String(), this binary's
	// AllowEmpty lets a build commit an index without passages, or an update whose inputs
	// yielded no document delete every document (DeleteMissing). Without it an empty or
	// all-bad input is refused and the live generation stays.
	AllowEmpty bool

	// RAMBudget bounds, in bytes, the in-memory part of a postings build (--lexical
	// postings): when it fills, the passages so far become a segment, merged with the others
	// as the build goes and at its end, so that the build's memory and the collector's work
	// per passage do not grow with the collection. A segment is written in the background
	// while the next one fills, keeping its vocabulary meanwhile, so the build may hold up to
	// about twice this. 0: postings.DefaultRAMBudget. It does not change the index written
	// (nor its scores), so it is not recorded.
	RAMBudget int64

	// Qdrant are the settings of the collections of a new index on a Qdrant cluster (Dir
	// qdrant://...; the location's own settings win, an update copies its base's).
	Qdrant QdrantOptions

	lang LanguageChoice // settled before writing (language.go)
	// eng are the engines the writer writes through, connected by the operation
	// (Index.engines) from the store's and Engines.
	eng Engines
	// inputLang is the language detected in each input ("" for none), for the passages of a
	// multilingual build (passageLanguage)
	inputLang []string
	// ivfFrom, set only by tests, replaces DefaultIVFFrom (0: it).
	ivfFrom int
	// vectorKind is the kind of dense index the store's engines write (store.Connected), which
	// names the final commit's pass on the progress line.
	vectorKind string
	// faultAt, set only by the fault-injection tests of this package, is called at each named
	// commit point of a writer; an error it returns is handled as an I/O error at that point.
	faultAt func(point string) error
}

// at marks the commit point named point (see faultAt).
func (o *Options) at(point string) error {
	if o.faultAt == nil {
		return nil
	}
	return o.faultAt(point)
}

// Defaults of Options, exported so that command-line flags show the values the library
// applies instead of retyping them.
const (
	// DefaultMaxBadListed is Options.MaxBadListed's default.
	DefaultMaxBadListed = 100
	// DefaultCheckpointEvery is Options.CheckpointEvery's default: frequent enough that a
	// crash costs minutes, not hours, rare enough that the checkpoints' graph saves stay
	// cheap.
	DefaultCheckpointEvery = 50000
	// DefaultIVFFrom is the number of passages from which a build that names no
	// VectorIndex writes the inverted file rather than the graph: at 1M topic-fixture
	// passages the graph took 440 s of a 552 s build (docs/benchmarks.md), the inverted file
	// builds in a fraction of that, and below a few hundred thousand passages the graph is
	// quick to build and searches faster at equal recall.
	DefaultIVFFrom = 300000
	// DefaultCheckpointAfter is Options.CheckpointAfter's default: a crash loses at most
	// about this much work, and a build at 10,000 passages a second makes a checkpoint (and a
	// lexical segment) per 3 million passages, not per 50,000.
	DefaultCheckpointAfter = 5 * time.Minute
)

// SetDefaults fills the zero fields with the defaults a build applies: the build options'
// (BuildOptions.SetDefaults), MaxBadListed, CheckpointEvery, CheckpointAfter, RAMBudget, the
// graph's seed (DefaultHNSWSeed; hnsw applies its other defaults itself), the shards of
// Qdrant collections (qdrant.DefaultShards) and a silent Logger.
// Flags calls it on a copy to show them, so that a default is written only here.
func (o *Options) SetDefaults() {
	o.Build.SetDefaults()
	if o.MaxBadListed == 0 {
		o.MaxBadListed = DefaultMaxBadListed
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	if o.CheckpointAfter == 0 {
		o.CheckpointAfter = DefaultCheckpointAfter
	}
	if o.RAMBudget == 0 {
		o.RAMBudget = postings.DefaultRAMBudget
	}
	if o.HNSW.Seed == 0 {
		o.HNSW.Seed = DefaultHNSWSeed
	}
	if o.Qdrant.Shards == 0 {
		o.Qdrant.Shards = qdrant.DefaultShards
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// validate sets the defaults and checks the options.
func (o *Options) validate() error {
	if o.Build.MaxWords < 0 || o.Build.BatchSize < 0 || o.RAMBudget < 0 {
		return errors.New("negative size in build options")
	}
	if o.RAMBudget > 0 && o.RAMBudget < postings.MinRAMBudget {
		return fmt.Errorf("RAM budget of %d bytes: want at least %d", o.RAMBudget, postings.MinRAMBudget)
	}
	o.SetDefaults()
	switch o.VectorIndex {
	case "", VectorIndexHNSW, VectorIndexIVF:
	default:
		return fmt.Errorf("--vector-index %q: want %s or %s (or nothing: chosen by size)", o.VectorIndex, VectorIndexHNSW, VectorIndexIVF)
	}
	if err := o.IVF.Validate(); err != nil {
		return err
	}
	if o.Encoder != nil {
		if err := o.HNSW.Validate(); err != nil {
			return fmt.Errorf("hnsw: %w", err)
		}
		if o.Encoder.Identity().Dim <= 0 {
			return errors.New("encoder reports no dimension")
		}
	}
	return nil
}

// Summary reports what a build did. Counts add up: Documents + skipped + Bad = records read.
type Summary struct {
	Dir        string
	Generation int
	Counts     Counts
	BadRecords []string   // first MaxBadListed malformed records, with file and position
	Dense      *DenseInfo // nil without an encoder
	Elapsed    time.Duration
	// Update says what was added, replaced, kept and deleted (updates and deletes only).
	Update *UpdateCounts
	// NotFound lists document ids Delete was asked for that the index does not hold.
	NotFound []string
	// Tombstones is the number of dead keys in the new generation; Compacted says whether
	// it was compacted (written without them).
	Tombstones int
	Compacted  bool
	// Upgraded is what a compaction added besides dropping tombstones: the base generation's
	// Outdated, "" when it was current.
	Upgraded string
	// CompactionError is set when the update or delete committed (Generation is live) but
	// the compaction that should have followed failed; the index is usable, with its
	// tombstones, and `kairos compact` can be run again.
	CompactionError string
	// Checkpoints counts checkpoint generations committed; Resumed says where a resumed
	// build started (documents skipped).
	Checkpoints int
	Resumed     int
	// NoCheckpoint is set by Resume when there was no checkpoint to resume: it built from
	// scratch, which a user who asked to resume should be told.
	NoCheckpoint bool
	// Language is the language the passages were analysed as, and why.
	Language LanguageChoice
	// LexicalGeneration is the BM25-only generation a lexical-first build committed (live
	// while the vectors were embedded) before Generation; 0 otherwise.
	LexicalGeneration int
	// LexicalElapsed is how long the build took to make LexicalGeneration live.
	LexicalElapsed time.Duration
	// Stages says how long each stage of reading and writing worked (builds, updates and
	// resumes of a local index; nil otherwise).
	Stages *BuildStages
}

// ErrEmptyInput is returned when the inputs yield nothing and committing would replace an
// index by an empty one (Options.AllowEmpty allows it).
var ErrEmptyInput = errors.New("empty input")

// countsText describes what a reader found, for errors about empty inputs.
func countsText(c Counts) string {
	skipped := 0
	for _, n := range c.Skipped {
		skipped += n
	}
	return fmt.Sprintf("%d documents read, %d bad, %d skipped", c.Documents, c.Bad, skipped)
}

// PassagesPerSecond is the build's overall rate.
func (s *Summary) PassagesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Counts.Passages) / s.Elapsed.Seconds()
}
