package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/ivfvec"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Verify checks one generation (0: the live one): the manifest's own checksum and version,
// the size and sha256 of every file it lists (and no unlisted files), the passage store
// segments, tombstones and document table (checksums, counts), and that the lexical index,
// the vector index (HNSW graph or inverted file, whose lists it checks too) and the store hold
// the same live passage set.
func (s *Store) Verify(ctx context.Context, gen int) (*store.VerifyReport, error) {
	dir := s.genDir(gen)
	if gen == 0 {
		cur, err := manifest.Current(s.dir)
		if err != nil {
			return nil, err
		}
		dir = cur
	}
	return verifyDir(ctx, dir)
}

// verifyDir checks the generation in directory gen (Verify).
func verifyDir(ctx context.Context, gen string) (*store.VerifyReport, error) {
	rep := &store.VerifyReport{Generation: gen}
	bad := func(path, format string, a ...any) { rep.Add(path, fmt.Sprintf(format, a...)) }
	man, err := manifest.Read(gen)
	if err != nil {
		var de *backend.DamagedError
		if errors.As(err, &de) {
			bad(de.Path, "%s", de.What)
		} else {
			bad(filepath.Join(gen, manifest.FileName), "%v", err)
		}
		return rep, nil
	}
	lexicalDamaged := false
	for name, want := range man.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Files++
		path := filepath.Join(gen, filepath.FromSlash(name))
		got, err := manifest.SumFile(path)
		switch {
		case err != nil:
			bad(path, "%v", err)
		case got.Size != want.Size:
			bad(path, "size %d, manifest says %d", got.Size, want.Size)
		case got.SHA256 != want.SHA256:
			bad(path, "sha256 %s, manifest says %s", got.SHA256, want.SHA256)
		default:
			continue
		}
		// bleve trusts its files: opening a damaged one may panic or mislead, so the lexical
		// part is not opened at all (the damaged file is reported above).
		lexicalDamaged = lexicalDamaged || inLexicalDir(gen, man, name)
	}
	onDisk := map[string]manifest.FileSum{}
	entries, err := os.ReadDir(gen)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name() == manifest.FileName {
			continue
		}
		if err := sumTree(gen, filepath.Join(gen, e.Name()), onDisk); err != nil {
			bad(filepath.Join(gen, e.Name()), "%v", err)
		}
	}
	for name := range onDisk {
		if _, ok := man.Files[name]; !ok {
			bad(filepath.Join(gen, name), "file not in the manifest")
		}
	}
	lexEngine, err := lexicalNamed(man.Options.Lexical)
	if err != nil {
		bad(gen, "%v", err)
		return rep, nil
	}
	g := backend.Gen{Name: manifest.GenerationName(man.Generation), Dir: gen}
	passages, err := kpst.Open(g, man.PassageLayout(), false)
	if err != nil {
		bad(gen, "passage store: %v", err)
		return rep, nil
	}
	defer passages.Close()
	rep.Passages = passages.Live()
	checkDocTable(gen, passages, func(f string, a ...any) { bad(filepath.Join(gen, doctable.FileName), f, a...) })
	if man.Dense != nil {
		vpath := hnswvec.Path(gen)
		if man.Dense.IndexKind() == manifest.VectorIndexIVF {
			vpath = ivfvec.Dir(gen)
		}
		v, err := openVectors(gen, man, passages, hnsw.LoadOptions{Mapped: true})
		if err != nil {
			var de *backend.DamagedError
			if errors.As(err, &de) {
				bad(de.Path, "%s", de.What)
			} else {
				bad(vpath, "%v", err)
			}
		} else {
			defer v.Close()
			// The inverted file checks its own structure: every vector in one list.
			if iv, ok := v.(*ivfvec.Reader); ok {
				if err := iv.Verify(); err != nil {
					bad(vpath, "%v", err)
				}
			}
			missing, extra := 0, 0
			for k := 0; k < passages.Len(); k++ {
				in, _ := v.Has(ctx, uint32(k)) // a graph in memory or mapped cannot fail to tell
				switch dead := passages.Tombstones().Has(uint32(k)); {
				case !dead && !in:
					missing++
				case dead && in:
					extra++
				}
			}
			if missing > 0 || extra > 0 || v.Live() != passages.Live() {
				bad(vpath, "%d live vectors for %d live passages: %d passages have none, %d tombstoned passages still have one",
					v.Live(), passages.Live(), missing, extra)
			}
		}
	}
	lexDir := lexicalDir(gen, man.Options.Lexical)
	if lexicalDamaged {
		bad(lexDir, "not opened: its files do not match the manifest")
		return rep, nil
	}
	idx, err := lexEngine.new(0).Open(ctx, g, backend.Scoring{}, passages)
	if err != nil {
		var de *backend.DamagedError
		if errors.As(err, &de) {
			bad(de.Path, "%s", de.What)
		} else {
			bad(lexDir, "opening: %v", err)
		}
		return rep, nil
	}
	defer idx.Close()
	if err := checkLexicalKeys(ctx, idx, passages, func(f string, a ...any) { bad(lexDir, f, a...) }); err != nil {
		return nil, err
	}
	// An engine that keeps statistics of its deletions beside its index (postings) checks
	// them against the index.
	if err := idx.Check(ctx); err != nil {
		bad(lexDir, "%v", err)
	}
	return rep, nil
}

// checkDocTable checks that the document table lists exactly the live keys, each once.
func checkDocTable(gen string, passages *kpst.Store, bad func(string, ...any)) {
	docs, err := doctable.Read(filepath.Join(gen, doctable.FileName))
	if err != nil {
		bad("%v", err)
		return
	}
	seen := make([]bool, passages.Len())
	n := 0
	for id, e := range docs {
		for _, k := range e.Keys {
			switch {
			case int(k) >= passages.Len():
				bad("document %q: key %d beyond the store", id, k)
				return
			case passages.Tombstones().Has(k):
				bad("document %q: key %d is tombstoned", id, k)
				return
			case seen[k]:
				bad("document %q: key %d listed twice", id, k)
				return
			}
			seen[k] = true
			n++
		}
	}
	if n != passages.Live() {
		bad("lists %d passages, the store has %d live", n, passages.Live())
	}
}

// checkLexicalKeys checks that the lexical part holds the live keys of the store and nothing
// else.
func checkLexicalKeys(ctx context.Context, idx backend.LexicalReader, passages *kpst.Store, bad func(string, ...any)) error {
	count, err := idx.Docs(ctx)
	if err != nil {
		bad("doc count: %v", err)
		return nil
	}
	if count != passages.Live() {
		bad("%d documents, passage store has %d live passages", count, passages.Live())
	}
	const chunk = 1000
	missing, extra := 0, 0
	n := passages.Len()
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		keys := make([]uint32, 0, hi-lo)
		for k := lo; k < hi; k++ {
			keys = append(keys, uint32(k))
		}
		found, err := idx.Has(ctx, keys)
		if err != nil {
			return err
		}
		for k := lo; k < hi; k++ {
			switch dead := passages.Tombstones().Has(uint32(k)); {
			case !dead && !found[k-lo]:
				missing++
			case dead && found[k-lo]:
				extra++
			}
		}
	}
	if missing > 0 {
		bad("%d live passages of the store are missing from the BM25 index", missing)
	}
	if extra > 0 {
		bad("%d tombstoned passages are still in the BM25 index", extra)
	}
	return nil
}

// sumTree hashes every regular file under root, keyed by slash path relative to base.
func sumTree(base, root string, into map[string]manifest.FileSum) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return errors.New("unexpected non-regular file " + path)
		}
		sum, err := manifest.SumFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, path)
		if err != nil {
			return err
		}
		into[filepath.ToSlash(rel)] = sum
		return nil
	})
}
