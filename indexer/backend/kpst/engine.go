package kpst

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// Engine is the local passage engine (backend.PassageStore): a generation's passages are the
// store segments in its directory (the base's linked, one new per writer) and its tombstones
// file.
type Engine struct{}

var _ backend.PassageStore = Engine{}

// SegmentName is the name of the store segment generation gen's writer adds.
func SegmentName(gen backend.Gen) string {
	return "passages-" + strings.TrimPrefix(gen.Name, "g-") + ".kpst"
}

// Begin links the base's segments into gen.Dir (they are immutable, so the base stays
// byte-identical), takes over a copy of its tombstones and starts the segment of the
// passages this writer adds.
func (Engine) Begin(_ context.Context, gen backend.Gen, base *backend.PassageBase) (backend.PassageWriter, error) {
	w := &writer{dir: gen.Dir, dead: &tombstones.Set{}}
	if base != nil {
		bs, ok := base.Store.(*Store)
		if !ok {
			return nil, fmt.Errorf("passage store: the base %s is not a local store (%T)", base.Gen.Name, base.Store)
		}
		w.dead = bs.Tombstones().Clone()
		w.live = base.Layout.Live
		w.segs = append([]Segment(nil), base.Layout.Segments...)
		for _, s := range w.segs {
			if err := atomicfile.LinkOrCopy(filepath.Join(base.Gen.Dir, s.Name), filepath.Join(gen.Dir, s.Name)); err != nil {
				return nil, fmt.Errorf("linking store segment: %w", err)
			}
		}
	}
	next := backend.PassageLayout{Segments: w.segs}.NextKey()
	w.name = SegmentName(gen)
	var err error
	if w.seg, err = Create(filepath.Join(gen.Dir, w.name), next); err != nil {
		return nil, err
	}
	return w, nil
}

// Open opens gen's segments and tombstones and checks them against layout (the package's
// Open).
func (Engine) Open(_ context.Context, gen backend.Gen, layout backend.PassageLayout, trusted bool) (backend.Passages, error) {
	return Open(gen, layout, trusted)
}

// Open opens gen's segments and tombstones and checks them against layout; trusted skips the
// segments' checksums (files this process just wrote and synced).
func Open(gen backend.Gen, layout backend.PassageLayout, trusted bool) (*Store, error) {
	dead, err := tombstones.Read(filepath.Join(gen.Dir, tombstones.FileName))
	if err != nil {
		return nil, err
	}
	if dead.Len() != layout.Tombstones {
		return nil, fmt.Errorf("%s: %d tombstones, manifest says %d", gen.Dir, dead.Len(), layout.Tombstones)
	}
	store, err := OpenSegments(gen.Dir, layout.Segments, dead, trusted)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gen.Dir, err)
	}
	if store.Live() != layout.Live {
		store.Close()
		return nil, fmt.Errorf("%s: passage store has %d live passages, manifest %d", gen.Dir, store.Live(), layout.Live)
	}
	return store, nil
}

// Drop has nothing of its own to delete: the generation's directory holds the files.
func (Engine) Drop(context.Context, backend.Gen) error { return nil }

// writer is Engine's PassageWriter.
type writer struct {
	dir  string
	name string // the new segment's file
	seg  *Writer
	segs []Segment // the base's
	dead *tombstones.Set
	live int
}

func (w *writer) Add(_ context.Context, key uint32, p *corpus.Passage) error {
	if want := w.seg.Base() + uint32(w.seg.Count()); key != want {
		return fmt.Errorf("passage store: key %d added where key %d is next", key, want)
	}
	if _, err := w.seg.Add(p); err != nil {
		return fmt.Errorf("passage store: %w", err)
	}
	w.live++
	return nil
}

func (w *writer) Delete(key uint32) bool {
	if !w.dead.Add(key) {
		return false
	}
	w.live--
	return true
}

// Commit closes the new segment (removed when empty and the base has segments: a generation
// that only deleted adds no file) and writes the tombstones. The new segment was hashed as it
// was written (Files).
func (w *writer) Commit(context.Context) (backend.PassageCommit, error) {
	if err := w.seg.Close(); err != nil {
		return backend.PassageCommit{}, fmt.Errorf("closing passage store: %w", err)
	}
	segs := w.segs
	var files []backend.CommittedFile
	if w.seg.Count() > 0 || len(segs) == 0 {
		segs = append(segs, Segment{Name: w.name, Base: w.seg.Base(), Count: w.seg.Count()})
		size, sum := w.seg.Sum()
		files = []backend.CommittedFile{{Path: w.name, Size: size, SHA256: hex.EncodeToString(sum[:])}}
	} else if err := os.Remove(filepath.Join(w.dir, w.name)); err != nil {
		return backend.PassageCommit{}, err
	}
	if err := tombstones.Write(filepath.Join(w.dir, tombstones.FileName), w.dead); err != nil {
		return backend.PassageCommit{}, fmt.Errorf("writing tombstones: %w", err)
	}
	return backend.PassageCommit{Layout: backend.PassageLayout{Segments: segs, Tombstones: w.dead.Len(), Live: w.live}, Files: files}, nil
}

func (w *writer) Abort() { w.seg.Abort() }
