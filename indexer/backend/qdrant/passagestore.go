package qdrant

import (
	"context"
	"fmt"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
)

// PassageStore is the passage part of the engine (backend.PassageStore). A passage is kept in
// the payload of its point, which the lexical writer upserts (Lexical's batches), so the
// writer stores nothing of its own: it checks the keys the driver hands it, in order, and
// counts them, and the layout it commits names the generation's key range without a file.
type PassageStore struct{ e *Engine }

var _ backend.PassageStore = PassageStore{}

// PassageStore returns the passage part of the engine.
func (e *Engine) PassageStore() PassageStore { return PassageStore{e} }

// Begin starts gen's passage part after base's keys.
func (PassageStore) Begin(_ context.Context, gen backend.Gen, base *backend.PassageBase) (backend.PassageWriter, error) {
	w := &passageWriter{name: "keys-" + strings.TrimPrefix(gen.Name, "g-"), dead: map[uint32]bool{}}
	if base != nil {
		w.segs = append([]backend.Segment(nil), base.Layout.Segments...)
		w.live = base.Layout.Live
	}
	w.first = backend.PassageLayout{Segments: w.segs}.NextKey()
	w.next = w.first
	return w, nil
}

// Open opens gen's passages (OpenPassages); the layout has nothing to check on the cluster.
func (s PassageStore) Open(ctx context.Context, gen backend.Gen, _ backend.PassageLayout, _ bool) (backend.Passages, error) {
	return s.e.OpenPassages(ctx, gen)
}

// Drop deletes gen's collection: all its parts at once.
func (s PassageStore) Drop(ctx context.Context, gen backend.Gen) error { return s.e.Drop(ctx, gen) }

// passageWriter is PassageStore's writer.
type passageWriter struct {
	name        string
	segs        []backend.Segment // the base's
	first, next uint32
	dead        map[uint32]bool // deleted by this writer: their points are removed
	live        int
}

func (w *passageWriter) Add(_ context.Context, key uint32, _ *corpus.Passage) error {
	if key != w.next {
		return fmt.Errorf("passages: key %d added where key %d is next", key, w.next)
	}
	w.next++
	w.live++
	return nil
}

func (w *passageWriter) Delete(key uint32) bool {
	if w.dead[key] {
		return false
	}
	w.dead[key] = true
	w.live--
	return true
}

// Commit records the writer's key range; a collection keeps no tombstones.
func (w *passageWriter) Commit(context.Context) (backend.PassageCommit, error) {
	segs := w.segs
	if w.next > w.first || len(segs) == 0 {
		segs = append(segs, backend.Segment{Name: w.name, Base: w.first, Count: int(w.next - w.first)})
	}
	return backend.PassageCommit{Layout: backend.PassageLayout{Segments: segs, Live: w.live}}, nil
}

func (w *passageWriter) Abort() {}
