// Package backend declares the engines one generation of a Kairos index is made of: a
// lexical index (BM25), a vector index (dense) and the passage store (PassageStore, whose keys
// the indexer allocates and every part shares). Each is a small
// interface, generation-aware (begin a generation from scratch or from a base, write to it,
// commit it, open it, drop it), so that another engine (a different lexical index, a remote
// vector database) replaces one part without touching the indexer or the searches.
//
// Filters are passed down: an engine applies dates and sources while it searches, so a
// filtered search returns the best passages that pass, not the passing few of the best.
//
// Every method that may do I/O takes the caller's context first and returns an error when it
// cannot answer: a remote engine (Qdrant) reads over the network, and a failed read must not
// pass for an answer (a missing vector, a dead passage).
//
// What only some engines do is an option of Begin or Commit (LexicalBegin, VectorBegin,
// CommitOptions) that the others may ignore, or a field of a result (LexicalCommit,
// VectorCommit, PassageCommit) that they leave empty: the driver never probes an engine for an
// interface it may lack, and a rename on one side is a compile error, not a capability
// silently lost.
//
// The local engines live in subpackages, one each: blevebm25 (bleve, with Kairos's own
// collection statistics), postingsbm25 (Kairos's postings), hnswvec (internal/hnsw), ivfvec
// (internal/ivf, the inverted file of large indexes) and kpst (the passage store); tombstones
// owns the file of deleted passage keys that the passage store and the postings engine both read.
package backend

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"time"

	"github.com/kairos-rag/kairos/corpus"
)

// VerifyBudget is the size up to which an engine verifies a file's checksum when it opens it
// (a passage store segment, a postings segment). Larger files are memory-mapped and opened
// without reading them whole, which is what lets an index of millions of passages open in a
// moment and live in the page cache instead of the heap; every record read from them is
// bounds-checked, and the manifest's sha256 of the file (indexer's full check: kairos verify,
// serve --verify) covers their bytes.
const VerifyBudget = 64 << 20

// Gen names one generation for an engine. Local engines keep their files under Dir; a remote
// engine keys its collection by Name.
type Gen struct {
	Name string // "g-000003"
	Dir  string // the generation's directory (its *.tmp name while it is being written)
}

// Filter restricts a search. Zero values do not filter.
//
// It is Kairos's one definition of a resolved filter: search.Filters is this type, and the
// request front door (rerank/request) and the WikiChat filters (server) produce it; only the
// wire form of a request, strings as a caller writes them, is a type of its own.
type Filter struct {
	DateFrom time.Time // passages dated on or after (an undated passage fails)
	DateTo   time.Time // passages dated on or before (an undated passage fails)
	// Sources are the sources a passage may have; nil and empty alike mean any source.
	Sources []string
	// None lets no passage through: a filter the caller knows can match nothing (a language
	// the index is not in, two different sources required at once). It is a flag of its own
	// because an empty Sources list had come to mean both "any source" and "no source",
	// and engines read it as the former.
	None bool
	// Languages are the languages a passage may be in (Passage.Language), for an index of
	// several languages; nil and empty alike mean any language. search resolves a language
	// filter on a single-language index itself (all or None), so engines see it only on
	// indexes whose passages all carry their language.
	Languages []string
	// ExcludeLanguages are languages a passage may not be in. search resolves them, with
	// Languages, into the Languages it passes down (a query is analysed in each language
	// searched), so engines meet them only from other callers; those that filter apply them.
	ExcludeLanguages []string
	// BlockTypes are the block types a passage may have (corpus.BlockTypes: "text", "table",
	// "infobox"); nil and empty alike mean any. A passage with no recorded type is "text".
	BlockTypes []string
}

// Empty reports whether f lets every passage through.
func (f Filter) Empty() bool {
	return !f.None && f.DateFrom.IsZero() && f.DateTo.IsZero() && len(f.Sources) == 0 &&
		len(f.Languages) == 0 && len(f.ExcludeLanguages) == 0 && len(f.BlockTypes) == 0
}

// MatchLanguage applies f's languages to a passage's language.
func (f Filter) MatchLanguage(language string) bool {
	return (len(f.Languages) == 0 || slices.Contains(f.Languages, language)) && !slices.Contains(f.ExcludeLanguages, language)
}

// MatchBlockType applies f's block types to a passage's block type as stored ("" is text).
func (f Filter) MatchBlockType(blockType string) bool {
	if blockType == "" {
		blockType = corpus.BlockText
	}
	return len(f.BlockTypes) == 0 || slices.Contains(f.BlockTypes, blockType)
}

// BlockTypeTerms is f's block types as an engine that matches indexed values (bleve, Qdrant)
// applies them: the types a passage must have one of, or, when "text" is among those asked
// for, the types it must not have. Prose passages of indexes built before passages carried a
// type have no value indexed at all, and only the second form finds them. Both are nil when
// f does not filter by block type.
func (f Filter) BlockTypeTerms() (must, mustNot []string) {
	if len(f.BlockTypes) == 0 {
		return nil, nil
	}
	if !slices.Contains(f.BlockTypes, corpus.BlockText) {
		return f.BlockTypes, nil
	}
	for _, t := range corpus.BlockTypes() {
		if !slices.Contains(f.BlockTypes, t) {
			mustNot = append(mustNot, t)
		}
	}
	return nil, mustNot
}

// Match applies f to a passage's date and source: the one definition every engine that
// filters by hand follows.
func (f Filter) Match(date time.Time, source string) bool {
	if f.None {
		return false
	}
	if !f.DateFrom.IsZero() && (date.IsZero() || date.Before(f.DateFrom)) {
		return false
	}
	if !f.DateTo.IsZero() && (date.IsZero() || date.After(f.DateTo)) {
		return false
	}
	if len(f.Sources) == 0 {
		return true
	}
	for _, s := range f.Sources {
		if s == source {
			return true
		}
	}
	return false
}

// HybridSearcher answers a BM25 query and a dense query together, for an engine that holds a
// generation's lexical and vector parts in one place (Qdrant): their first pages in one round
// trip, with exactly the rankings its lexical and vector readers' Search would return. The
// store that opens such a generation hands it beside the readers (store.Parts.Hybrid); search
// uses it for hybrid queries when it is there, and makes the two calls otherwise.
type HybridSearcher interface {
	SearchHybrid(ctx context.Context, lq LexicalQuery, vq VectorQuery) (lexical, dense []Hit, err error)
}

// Hit is a passage key with its score, as an engine ranks it. Engines order hits best first,
// ties by passage key compared as decimal strings (search's tie rule).
type Hit struct {
	Key   uint32
	Score float64
}

// CollectionStats are the statistics BM25 scores with, taken from the manifest so that a
// score depends only on the live passages, never on how an engine split them into segments.
type CollectionStats struct {
	Docs   int   // live passages
	Tokens int64 // analysed tokens of the text field over the live passages
}

// BM25Params are BM25's term-frequency saturation (K1) and length normalisation (B).
type BM25Params struct{ K1, B float64 }

// DefaultBM25 are the BM25 parameters of every search and build that names none: the one
// definition (search.BM25K1 and BM25B are these; an index on Qdrant bakes them into
// its weights and records them in its manifest). Chosen on the SciFact train qrels (README,
// "BM25"); b 0.4 rather than Lucene's 0.75 because passages are already cut to at most 120
// words, so length matters less.
func DefaultBM25() BM25Params { return BM25Params{K1: DefaultK1, B: DefaultB} }

// DefaultK1 and DefaultB are DefaultBM25's fields, as constants for other constants.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.4
)

// Scoring is how a lexical reader scores: BM25's parameters and the collection statistics.
// It is fixed when the reader opens (an engine may have baked it into its index).
type Scoring struct {
	Params BM25Params
	Stats  CollectionStats
}

// LexicalQuery is one BM25 search: the query's analysed, distinct terms (search analyses the
// text in the index's language), how many hits, and the filter.
type LexicalQuery struct {
	Terms  []string
	N      int
	Filter Filter
}

// Lexical is a lexical engine.
type Lexical interface {
	// Begin starts the lexical part of gen, empty or (base non-nil) as a copy of base's that
	// leaves base unchanged.
	Begin(ctx context.Context, gen Gen, base *Gen, o LexicalBegin) (LexicalWriter, error)
	// Open opens the committed lexical part of gen for searching with sc; meta answers
	// filters for engines that keep no metadata of their own.
	Open(ctx context.Context, gen Gen, sc Scoring, meta Meta) (LexicalReader, error)
	// Drop deletes the lexical part of gen.
	Drop(ctx context.Context, gen Gen) error
}

// LexicalBegin says how a lexical part begins.
type LexicalBegin struct {
	// Analyzer names the text analyzer (internal/langanalysis).
	Analyzer string
	// Adopt says the base is the build's own checkpoint, committed with
	// CommitOptions.Checkpoint: an engine that left its flushed segments unmerged there
	// (postings) takes them as parts of this writer, to be merged with the passages it adds
	// (in the background, and at Commit), so a build that went through checkpoints ends as one
	// that did not. An engine that merges by itself (bleve) copies the base as any other.
	Adopt bool
}

// CommitOptions say how a writer commits its part.
type CommitOptions struct {
	// Checkpoint says the part is a build's checkpoint, which nothing searches: the engine
	// may leave the work only a searched part needs (postings' final merge, the graph's
	// repair pass) to the writer that adopts it (LexicalBegin.Adopt, VectorBegin.Adopt), so
	// the build stands still for a rename instead of a rewrite.
	Checkpoint bool
	// Progress, when set, is told how far long work after the last addition has got (done of
	// total, from several goroutines at once), for the build's progress line: the graph's
	// repair pass took 37 minutes at 10M static-fixture vectors on 2 cores.
	Progress func(done, total int)
}

// LexicalWriter writes the lexical part of one generation. Batches are built by one
// goroutine; Apply may run on two batches at once.
type LexicalWriter interface {
	NewBatch() LexicalBatch
	Apply(ctx context.Context, b LexicalBatch) error
	// Commit makes everything applied durable and closes the writer.
	Commit(ctx context.Context, o CommitOptions) (LexicalCommit, error)
	// Abort releases the writer after a failure; the generation is dropped by the caller.
	Abort()
}

// LexicalCommit is what a committed lexical part holds.
type LexicalCommit struct {
	Docs        int   // live passages indexed
	TokensAdded int64 // analysed tokens of the passages added by this writer
	// Files are the files the writer wrote and hashed as it wrote them (none for an engine
	// that keeps no files or does not hash them).
	Files []CommittedFile
}

// LexicalBatch collects additions and deletions for one Apply.
type LexicalBatch interface {
	Add(key uint32, p *corpus.Passage) error
	// Delete deletes key, whose passage p was (as the store holds it): an engine that keeps
	// the document frequencies of the live passages without rewriting its index (postings)
	// takes the deleted passage's terms from it; others may ignore p.
	Delete(key uint32, p *corpus.Passage)
	Len() int
}

// LexicalReader searches one committed generation. It is safe for concurrent use.
type LexicalReader interface {
	Search(ctx context.Context, q LexicalQuery) ([]Hit, error)
	// Docs is the number of passages the part holds (a check against the manifest).
	Docs(ctx context.Context) (int, error)
	// Has reports, for each key, whether the part holds it (verify).
	Has(ctx context.Context, keys []uint32) ([]bool, error)
	// DocFreq returns, for each analysed term, how many live passages hold it: how rare a
	// word is in the index (the chat layer's attribution check asks).
	DocFreq(ctx context.Context, terms []string) ([]int, error)
	// Check checks what the part keeps beside its index against it (verify): postings'
	// statistics of its deletions; nil for an engine that keeps nothing of the kind.
	Check(ctx context.Context) error
	Close() error
}

// VectorQuery is one nearest-neighbour search.
type VectorQuery struct {
	Vector []float32
	K      int
	Ef     int // candidate list size (0: the index's default)
	// Rescore is how many candidates an inverted file rescores with their vectors (0: its
	// default); other engines are never sent one (search.Open refuses it for them).
	Rescore int
	Exact   bool // brute force: the reference approximate searches are measured against
	Filter  Filter
}

// Vectors is a vector engine.
type Vectors interface {
	// Begin starts the vector part of gen: empty for vectors of dim, or (base non-nil) as a
	// copy of base's. A base opened by the same engine may be taken over: the caller does not
	// use it afterwards.
	Begin(ctx context.Context, gen Gen, dim int, base VectorReader, o VectorBegin) (VectorWriter, error)
	// Open opens the committed vector part of gen; meta answers filters on passage keys for
	// engines that keep no metadata of their own.
	Open(ctx context.Context, gen Gen, meta Meta) (VectorReader, error)
	Drop(ctx context.Context, gen Gen) error
}

// Meta tells an engine what a filter asks of a passage, for engines that filter by hand. It
// takes the search's context because a remote store answers it with a request.
type Meta interface {
	// Meta is the passage's date and source.
	Meta(ctx context.Context, key uint32) (date time.Time, source string, err error)
	// Language is the passage's language ("" in an index of one language).
	Language(ctx context.Context, key uint32) (string, error)
	// BlockType is the passage's block type as stored ("" for prose).
	BlockType(ctx context.Context, key uint32) (string, error)
}

// VectorBegin says how a vector part begins.
type VectorBegin struct {
	// Adopt says the part taken over from the base is the build's own checkpoint, committed
	// with CommitOptions.Checkpoint: Commit does the work left there (the graph's repair
	// pass, a self-search of every node with few in-links) over it too, even when nothing is
	// added after it.
	Adopt bool
	// Expect is how many vectors the part will hold in all, when the writer knows it (0: it
	// does not): an engine that allocates for them (the graph) allocates once, at the final
	// size, instead of copying its arrays as they grow (the old copy and the new one held at
	// once, twice the largest array).
	Expect int
}

// VectorWriter writes the vector part of one generation. Add is called by one goroutine.
type VectorWriter interface {
	Add(ctx context.Context, keys []uint32, vecs [][]float32) error
	Delete(key uint32)
	Len() int // vectors held, deleted ones included
	// Commit makes the part durable and closes the writer.
	Commit(ctx context.Context, o CommitOptions) (VectorCommit, error)
	Abort()
}

// VectorCommit is what a committed vector part reports.
type VectorCommit struct {
	// Index names the kind of index the engine built, as the manifest records it
	// (manifest.VectorIndex*): "" for the HNSW graph (hnswvec, and the indexes written before
	// the name was recorded), "ivf" for the inverted file (ivfvec).
	Index string
	// Params are the parameters of the index the engine built, as the manifest records them
	// (the graph's: hnsw.Options' JSON; the inverted file's: ivf.Options'); nil for an engine
	// that keeps parameters of its own.
	Params json.RawMessage
	// Files are the files the writer wrote and hashed as it wrote them.
	Files []CommittedFile
	// Reopen, when set, returns a reader of the committed part without loading it again (the
	// graph stays in memory), so a build goes on from its checkpoint; nil: open it again.
	Reopen func(meta Meta) VectorReader
}

// VectorReader searches one committed vector part. It is safe for concurrent use.
type VectorReader interface {
	Search(ctx context.Context, q VectorQuery) ([]Hit, error)
	// Vector returns the stored vector of key (compaction reuses vectors); ok is false when
	// key has none. A failure to read it (a network error, a damaged file) is an error, never
	// a missing vector.
	Vector(ctx context.Context, key uint32) (v []float32, ok bool, err error)
	Dim() int  // dimension of the vectors
	Len() int  // vectors held, deleted ones included
	Live() int // vectors not deleted
	// Has reports whether key has a live vector (verify); an error when that cannot be told.
	Has(ctx context.Context, key uint32) (bool, error)
	Close() error
}

// CommittedFile is one file a writer wrote and hashed as it wrote it (the Files of a commit),
// by path relative to the generation directory, so that the generation's checksums need not
// read it back: a 1M-vector graph is 2 GB, and reading it back took most of the last minute
// of a `kairos index --device cuda` (an H200 machine whose disk is slower than its GPU). The
// indexer still checks each size on disk.
type CommittedFile struct {
	Path   string // relative to the generation directory, slash-separated
	Size   int64
	SHA256 string // hex
}

// ErrScoring is wrapped by the error of an engine that cannot score with the parameters it
// is opened with (bleve keeps one k1 and b per process): a conflict, not damage.
var ErrScoring = errors.New("scoring parameters refused")

// ErrDamaged is wrapped by every error that reports a damaged index file: a file whose size or
// sha256 differs from the manifest, or one an engine could not read.
var ErrDamaged = errors.New("index damaged")

// DamagedError names one damaged file of a generation and what is wrong with it.
type DamagedError struct {
	Path string // the damaged file (or the engine's directory when the file is not known)
	What string
}

func (e *DamagedError) Error() string { return "index damaged: " + e.Path + ": " + e.What }

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// WithoutPath is err's message without the path an *os.PathError repeats, for a
// DamagedError's What: its Path names the file already.
func WithoutPath(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// Passages reads the passages of one committed generation by key. It is safe for concurrent
// use. The local store (kpst) implements it; a remote engine may keep passages in the
// payload of its points.
type Passages interface {
	Meta
	Get(ctx context.Context, key uint32) (corpus.Passage, error)
	// DocID returns the document id of key without decoding the whole passage.
	DocID(ctx context.Context, key uint32) (string, error)
	// Each calls fn for every live passage in key order, stopping at the first error (fn's or
	// the store's).
	Each(ctx context.Context, fn func(key uint32, p corpus.Passage) error) error
	// GetMany returns the passages of keys, in their order, and DocIDs their document ids: one
	// request where reads are requests (Qdrant), a loop over Get and DocID locally. A search
	// reads its candidates through them.
	GetMany(ctx context.Context, keys []uint32) ([]corpus.Passage, error)
	DocIDs(ctx context.Context, keys []uint32) ([]string, error)
	Len() int  // keys, tombstoned ones included
	Live() int // passages not tombstoned
	// Dead reports whether key has no live passage; an error when that cannot be told (a
	// remote store asks its server).
	Dead(ctx context.Context, key uint32) (bool, error)
	// Close releases what the reader holds (a local store's mapped segments; a remote one's
	// connection is its store's).
	Close() error
}
