package qdrant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// The generations of an index on the cluster. Generation g is the collection "<Index>-<g>"
// (g a manifest.GenerationName); the alias "<Index>" names the live one. What a local index
// keeps in files beside its data, a generation keeps as records of its collection: the
// document table, then the manifest, written last; a checkpoint generation of a build in
// progress has a third record, the checkpoint, written after its manifest. A generation is
// committed when its manifest record exists and the alias names it, so the alias's swap
// switches manifest and data at once.

// Record slots of a generation's collection (WriteRecord, ReadRecord).
const (
	RecordManifest   = 0
	RecordDocTable   = 1
	RecordCheckpoint = 2 // a checkpoint generation's progress (manifest.Checkpoint)
)

// where names collection coll, or its record when record is not "", in messages, as a
// location a user gave would.
func (e *Engine) where(coll, record string) string {
	if record != "" {
		coll += ", " + record
	}
	return "qdrant://" + strings.Join(e.opts.Hosts, ",") + "/" + e.opts.Index + " (collection " + coll + ")"
}

// LiveGeneration returns the number of the generation the alias names, 0 when there is none.
func (e *Engine) LiveGeneration(ctx context.Context) (int, error) {
	coll, err := e.Live(ctx)
	if err != nil || coll == "" {
		return 0, err
	}
	name, own := strings.CutPrefix(coll, e.Alias()+"-")
	n, ok := manifest.ParseGeneration(name)
	if !own || !ok {
		return 0, fmt.Errorf("qdrant: the alias %s names %s, not a generation of this index", e.Alias(), coll)
	}
	return n, nil
}

// NextGeneration returns the number of a new generation: one past the highest that has a
// collection.
func (e *Engine) NextGeneration(ctx context.Context) (int, error) {
	names, err := e.Generations(ctx)
	if err != nil {
		return 0, err
	}
	next := 1
	for _, name := range names {
		if n, ok := manifest.ParseGeneration(name); ok && n >= next {
			next = n + 1
		}
	}
	return next, nil
}

// DropGenerations drops the collection of every generation keep refuses.
func (e *Engine) DropGenerations(ctx context.Context, keep func(gen int) bool) error {
	names, err := e.Generations(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		if n, ok := manifest.ParseGeneration(name); ok && !keep(n) {
			errs = append(errs, e.Drop(ctx, backend.Gen{Name: name}))
		}
	}
	return errors.Join(errs...)
}

// WriteGeneration stores the records of generation gen, its points written: the document
// table docs, then man. The collection's points are the files of a local generation, so man
// lists the document table record with its sum as its only file, no tombstones (a deleted
// passage's point is removed) and a dense vector per live passage; WriteGeneration sets
// those fields and the checksum.
func (e *Engine) WriteGeneration(ctx context.Context, gen int, docs []byte, man *manifest.Manifest) error {
	g := backend.Gen{Name: manifest.GenerationName(gen)}
	if err := e.WriteRecord(ctx, g, RecordDocTable, docs); err != nil {
		return fmt.Errorf("storing the document table: %w", err)
	}
	man.Files = map[string]manifest.FileSum{doctable.FileName: sumOf(docs)}
	man.Tombstones = 0
	if man.Dense != nil {
		man.Dense.Vectors = man.Counts.Passages
	}
	b, err := man.Marshal()
	if err != nil {
		return err
	}
	if err := e.WriteRecord(ctx, g, RecordManifest, b); err != nil {
		return fmt.Errorf("storing the manifest: %w", err)
	}
	return nil
}

// sumOf is the manifest.FileSum of b.
func sumOf(b []byte) manifest.FileSum {
	sum := sha256.Sum256(b)
	return manifest.FileSum{Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
}

// ReadManifest reads and checks the manifest record of collection coll, which must describe
// that collection's generation. A missing, damaged or misplaced manifest is a
// *backend.DamagedError naming the collection.
func (e *Engine) ReadManifest(ctx context.Context, coll string) (*manifest.Manifest, error) {
	b, err := e.ReadRecord(ctx, coll, RecordManifest)
	if err != nil {
		return nil, &backend.DamagedError{Path: e.where(coll, ""), What: "manifest: " + err.Error()}
	}
	man, err := manifest.Parse(b, e.where(coll, "manifest"))
	if err != nil {
		return nil, err
	}
	if want := e.Collection(manifest.GenerationName(man.Generation)); want != coll {
		return nil, &backend.DamagedError{Path: e.where(coll, ""), What: "its manifest describes generation " + manifest.GenerationName(man.Generation)}
	}
	return man, nil
}

// ReadDocTable reads the document table record of collection coll and checks it against
// the sum man records; a mismatch is a *backend.DamagedError.
func (e *Engine) ReadDocTable(ctx context.Context, coll string, man *manifest.Manifest) ([]byte, error) {
	b, err := e.ReadRecord(ctx, coll, RecordDocTable)
	if err != nil {
		return nil, err
	}
	if got, want := sumOf(b), man.Files[doctable.FileName]; got != want {
		return nil, &backend.DamagedError{Path: e.where(coll, "document table"),
			What: fmt.Sprintf("size %d sha256 %s, manifest says size %d sha256 %s", got.Size, got.SHA256, want.Size, want.SHA256)}
	}
	return b, nil
}

// WriteCheckpoint stores cp as the checkpoint record of generation gen, whose other records
// are written; it sets cp's checksum.
func (e *Engine) WriteCheckpoint(ctx context.Context, gen int, cp *manifest.Checkpoint) error {
	b, err := cp.Marshal()
	if err != nil {
		return err
	}
	if err := e.WriteRecord(ctx, backend.Gen{Name: manifest.GenerationName(gen)}, RecordCheckpoint, b); err != nil {
		return fmt.Errorf("storing the checkpoint: %w", err)
	}
	return nil
}

// PendingCheckpoint returns the checkpoint of the newest generation above live that has
// one, nil when none does; collections without one are an unfinished writer's.
func (e *Engine) PendingCheckpoint(ctx context.Context, live int) (*manifest.Checkpoint, error) {
	names, err := e.Generations(ctx)
	if err != nil {
		return nil, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		n, ok := manifest.ParseGeneration(names[i])
		if !ok || n <= live {
			continue
		}
		coll := e.Collection(names[i])
		b, err := e.ReadRecord(ctx, coll, RecordCheckpoint)
		if errors.Is(err, ErrNoRecord) {
			continue
		}
		if err != nil {
			return nil, err
		}
		where := e.where(coll, "checkpoint")
		cp, err := manifest.ParseCheckpoint(b, where)
		if err != nil {
			return nil, err
		}
		if cp.Generation != names[i] {
			return nil, &backend.DamagedError{Path: where, What: fmt.Sprintf("names generation %s, not its own", cp.Generation)}
		}
		return cp, nil
	}
	return nil, nil
}
