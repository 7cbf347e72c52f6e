package backend

import (
	"context"

	"github.com/kairos-rag/kairos/corpus"
)

// PassageStore is the engine that keeps the passages of a generation by key, beside Lexical
// and Vectors: a local directory's store segments (kpst) or a Qdrant collection's points. The
// driver allocates the keys (base, base+1, ... from the base generation's Layout.NextKey) and
// hands each passage to the writer with its key, so every engine numbers passages the same way
// and none keeps a scratch copy only to count them.
type PassageStore interface {
	// Begin starts the passage part of gen, empty or (base non-nil) as a copy of base's that
	// leaves base unchanged.
	Begin(ctx context.Context, gen Gen, base *PassageBase) (PassageWriter, error)
	// Open opens the committed passage part of gen, as its manifest describes it.
	Open(ctx context.Context, gen Gen, layout PassageLayout, trusted bool) (Passages, error)
	// Drop deletes the passage part of gen.
	Drop(ctx context.Context, gen Gen) error
}

// PassageBase is the generation a PassageWriter starts as a copy of.
type PassageBase struct {
	Gen    Gen
	Layout PassageLayout
	// Store is the base opened by the same engine (Open): the writer reads what it shares
	// with the base (the tombstones of a local store) from it instead of the files again.
	Store Passages
}

// PassageLayout is what a manifest records of a generation's passage part.
type PassageLayout struct {
	// Segments are the key ranges of the part in key order: a local store's files, a remote
	// store's ranges (named for the record, without files).
	Segments []Segment
	// Tombstones is the number of deleted keys the part keeps (a remote store removes its
	// deleted passages and keeps none).
	Tombstones int
	// Live is the number of passages not deleted.
	Live int
}

// NextKey is the key the next passage added after the layout's gets.
func (l PassageLayout) NextKey() uint32 {
	if n := len(l.Segments); n > 0 {
		return l.Segments[n-1].Base + uint32(l.Segments[n-1].Count)
	}
	return 0
}

// Segment is one key range of a passage part, as a manifest lists it: keys Base to
// Base+Count-1, kept in the store file Name (locally).
type Segment struct {
	Name  string `json:"name"`
	Base  uint32 `json:"base"`
	Count int    `json:"count"`
}

// PassageWriter writes the passage part of one generation. It is used by one goroutine.
type PassageWriter interface {
	// Add stores p under key, the next key of the generation: keys are added in order, one
	// after another from the base's Layout.NextKey (0 without a base).
	Add(ctx context.Context, key uint32, p *corpus.Passage) error
	// Delete deletes key, a live key of the base or of this writer; it reports false when
	// the key was already deleted (the caller does nothing more for it).
	Delete(key uint32) bool
	// Commit makes the part durable and closes the writer.
	Commit(ctx context.Context) (PassageCommit, error)
	// Abort releases the writer after a failure; the generation is dropped by the caller.
	Abort()
}

// PassageCommit is what a committed passage part reports.
type PassageCommit struct {
	// Layout is the part as the manifest records it.
	Layout PassageLayout
	// Files are the files the writer wrote and hashed as it wrote them.
	Files []CommittedFile
}
