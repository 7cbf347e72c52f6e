// Package local keeps the generations of an index in a local directory (store.Store):
//
//	DIR/CURRENT        one line: the name of the live generation ("g-000003")
//	DIR/CHECKPOINT     the checkpoint of a build in progress (manifest.Checkpoint), if any
//	DIR/g-000003/      manifest.json, passages-*.kpst, the lexical engine's files, dense.hnsw, ...
//	DIR/g-000004.tmp/  a generation being written (ignored by readers, removed by the next writer)
//
// A writer fills a g-N.tmp directory beside the live generation, syncs it, then renames it
// and replaces CURRENT by rename. Readers resolve CURRENT once and then only read that
// generation, so they always see a complete commit, and a crash at any point leaves the
// previous generation live. The files' formats and the generation names belong to
// indexer/manifest; the engines' files to their packages (indexer/backend/...).
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// tmpSuffix marks the directory of a generation being written.
const tmpSuffix = ".tmp"

// Store is the store of the index in one directory. Every writer holds the directory's lock
// (Lock).
type Store struct {
	dir string
}

var _ store.Store = (*Store)(nil)

// New returns the store of the index in dir. It creates nothing: a writer's Lock creates the
// directory.
func New(dir string) *Store { return &Store{dir: dir} }

// String is the index directory, as a location names it.
func (s *Store) String() string { return s.dir }

// Close has nothing to release.
func (s *Store) Close() error { return nil }

// genDir is the directory of committed generation gen.
func (s *Store) genDir(gen int) string { return filepath.Join(s.dir, manifest.GenerationName(gen)) }

// Lock takes the writer lock of the directory, creating it when missing. The lock is an
// advisory flock on the index directory itself, not on a file in it: a file can be deleted by
// hand, after which a second writer would lock a new file of the same name and both would
// write. The kernel releases it when the process dies, so a crash never leaves the index
// locked. Holding the lock, it removes the unfinished generations (g-N.tmp) a killed writer
// left: no other writer can be using them.
//
// A directory this Lock created is removed by unlock if it is still empty: a build
// interrupted or refused before it wrote anything (Ctrl-C in its first second, an input in
// another language) leaves no empty index directory behind.
func (s *Store) Lock(context.Context) (unlock func(), err error) {
	_, err = os.Stat(s.dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Open(s.dir)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", s.dir, err)
	}
	// The directory locked must still be the one at s.dir: another writer's unlock may have
	// removed it (empty) between MkdirAll and flock, and a lock on a removed directory
	// would let this writer write nowhere.
	if held, err := f.Stat(); err != nil {
		f.Close()
		return nil, err
	} else if now, err := os.Stat(s.dir); err != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, fmt.Errorf("%s: the directory was removed while being locked (another writer gave it up): %w", s.dir, store.ErrLocked)
	}
	if err := s.removeUnfinished(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: removing unfinished generations: %w", s.dir, err)
	}
	return func() {
		if created {
			os.Remove(s.dir) // fails, as it should, on a directory that holds anything
		}
		f.Close()
	}, nil
}

// removeUnfinished removes the g-N.tmp directories.
func (s *Store) removeUnfinished() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if _, ok := manifest.ParseGeneration(strings.TrimSuffix(name, tmpSuffix)); ok && strings.HasSuffix(name, tmpSuffix) {
			errs = append(errs, os.RemoveAll(filepath.Join(s.dir, name)))
		}
	}
	return errors.Join(errs...)
}

// Live is the number of the generation CURRENT names, 0 when there is none, or when CURRENT
// is damaged (names no generation, or one that does not exist): a build replaces such an
// index only with --force. A CURRENT that cannot be read is an error: read as "no index", it
// let a build's first checkpoint drop the generation CURRENT still named.
func (s *Store) Live(context.Context) (int, error) {
	cur, err := manifest.Current(s.dir)
	if errors.Is(err, manifest.ErrNoIndex) || errors.Is(err, backend.ErrDamaged) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the live generation: %w", err)
	}
	n, _ := manifest.ParseGeneration(filepath.Base(cur))
	return n, nil
}

// Begin numbers a new generation one past the highest on disk and makes its g-N.tmp
// directory.
func (s *Store) Begin(context.Context) (store.Writing, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return store.Writing{}, err
	}
	gen := 0
	for _, e := range entries {
		if n, ok := manifest.ParseGeneration(strings.TrimSuffix(e.Name(), tmpSuffix)); ok && n > gen {
			gen = n
		}
	}
	gen++
	tmp := s.genDir(gen) + tmpSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return store.Writing{}, err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return store.Writing{}, err
	}
	return store.Writing{Gen: gen, Dir: tmp}, nil
}

// Commit renames the sealed generation to its final name and syncs the directory, then
// points CURRENT at it, or, for a checkpoint, writes CHECKPOINT naming it. o.At marks the
// commit points.
func (s *Store) Commit(_ context.Context, w store.Writing, _ *manifest.Manifest, o store.CommitOptions) error {
	at := o.At
	if at == nil {
		at = func(string) error { return nil }
	}
	if err := os.Rename(w.Dir, s.genDir(w.Gen)); err != nil {
		return err
	}
	if o.Checkpoint != nil {
		if err := atomicfile.SyncDir(s.dir); err != nil {
			return err
		}
		if err := at("checkpoint-renamed"); err != nil {
			return err
		}
		return manifest.WriteCheckpoint(s.dir, o.Checkpoint)
	}
	if err := at("gen-renamed"); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(s.dir); err != nil {
		return err
	}
	if err := at("dir-synced"); err != nil {
		return err
	}
	if err := manifest.WriteCurrent(s.dir, w.Gen); err != nil {
		return err
	}
	return at("current-written")
}

// Discard removes the writer's directory.
func (s *Store) Discard(_ context.Context, w store.Writing) error { return os.RemoveAll(w.Dir) }

// Drop removes unfinished generations and every generation other than keep (the live one,
// and the one live before it, kept so that a server that has not reloaded yet keeps reading
// files that exist) and the checkpoint CHECKPOINT names. Errors leave the index usable.
func (s *Store) Drop(_ context.Context, keep ...int) error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	kept := map[int]bool{}
	for _, n := range keep {
		kept[n] = true
	}
	// A checkpoint that cannot be read may name any generation: every one is kept, and only
	// unfinished writers' directories go.
	cp, cpErr := manifest.ReadCheckpoint(s.dir)
	if cpErr != nil {
		cpErr = fmt.Errorf("every generation kept, since %s cannot be read (remove it if it is damaged: the build it records cannot resume): %w",
			manifest.CheckpointFileName, cpErr)
	}
	if cp != nil {
		if n, ok := manifest.ParseGeneration(cp.Generation); ok {
			kept[n] = true
		}
	}
	errs := []error{cpErr}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, tmpSuffix) {
			if _, ok := manifest.ParseGeneration(strings.TrimSuffix(name, tmpSuffix)); ok {
				errs = append(errs, os.RemoveAll(filepath.Join(s.dir, name)))
			}
			continue
		}
		if n, ok := manifest.ParseGeneration(name); ok && !kept[n] && cpErr == nil {
			errs = append(errs, os.RemoveAll(filepath.Join(s.dir, name)))
		}
	}
	return errors.Join(errs...)
}

// Manifest reads the manifest of generation gen, or of the live one (gen 0).
func (s *Store) Manifest(_ context.Context, gen int) (*manifest.Manifest, error) {
	if gen == 0 {
		cur, err := manifest.Current(s.dir)
		if err != nil {
			return nil, err
		}
		return manifest.Read(cur)
	}
	return manifest.Read(s.genDir(gen))
}

// DocTable opens the document table file of the generation man describes, after checking
// its size and sha256 against man (a reader of the table checks its framing).
func (s *Store) DocTable(_ context.Context, man *manifest.Manifest) (store.DocTable, error) {
	path := filepath.Join(s.genDir(man.Generation), doctable.FileName)
	got, err := manifest.SumFile(path)
	if err != nil {
		return nil, err
	}
	if want := man.Files[doctable.FileName]; got != want {
		return nil, &backend.DamagedError{Path: path, What: fmt.Sprintf("size %d sha256 %s, manifest says size %d sha256 %s", got.Size, got.SHA256, want.Size, want.SHA256)}
	}
	return os.Open(path)
}

// Checkpoint reads CHECKPOINT, nil when there is none.
func (s *Store) Checkpoint(context.Context) (*manifest.Checkpoint, error) {
	return manifest.ReadCheckpoint(s.dir)
}

// DropCheckpoint removes CHECKPOINT.
func (s *Store) DropCheckpoint(context.Context) error { return manifest.RemoveCheckpoint(s.dir) }
