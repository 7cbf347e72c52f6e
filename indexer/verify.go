package indexer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/genstore"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// Problem is one defect found by Verify; VerifyReport lists what Verify checked and what it
// found. They are genstore's, which a store away from the local disk fills too.
type (
	Problem      = genstore.Problem
	VerifyReport = genstore.VerifyReport
)

// Verify checks the live generation of the index at dir (see VerifyGeneration).
// dir may name an index on a Qdrant cluster (ParseLocation).
func Verify(ctx context.Context, dir string) (*VerifyReport, error) {
	st, err := storeOf(dir, nil)
	if err != nil {
		return nil, err
	}
	return st.Verify(ctx)
}

// VerifyGeneration checks one generation: the manifest's own checksum and version, the size
// and sha256 of every file it lists (and no unlisted files), the passage store segments,
// tombstones and document table (checksums, counts), and that the BM25 index, the HNSW graph
// and the store hold the same live passage set. It returns an error only when it cannot
// check at all; defects are in the report.
func VerifyGeneration(ctx context.Context, gen string) (*VerifyReport, error) {
	rep := &VerifyReport{Generation: gen}
	bad := func(path, format string, a ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: path, What: fmt.Sprintf(format, a...)})
	}
	man, err := ReadManifest(gen)
	if err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			bad(de.Path, "%s", de.What)
		} else {
			bad(filepath.Join(gen, manifest.FileName), "%v", err)
		}
		return rep, nil
	}
	bleveDamaged := false
	for name, want := range man.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Files++
		path := filepath.Join(gen, filepath.FromSlash(name))
		got, err := fileSHA256(path)
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
		// bleve trusts its files: opening a damaged one may panic or mislead, so it is
		// not opened at all (the damaged file is reported above).
		bleveDamaged = bleveDamaged || inLexicalDir(gen, man, name)
	}
	onDisk := map[string]FileSum{}
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
	eng, err := Engines{}.withDefaults(man.Options.Lexical, HNSWParams{})
	if err != nil {
		bad(gen, "%v", err)
		return rep, nil
	}
	g := backend.Gen{Name: manifest.GenerationName(man.Generation), Dir: gen}
	store, err := openLocalStore(ctx, eng.Passages, g, man, false)
	if err != nil {
		bad(gen, "passage store: %v", err)
		return rep, nil
	}
	defer store.Close()
	rep.Passages = store.Live()
	if man.FormatVersion >= 2 {
		checkDocTable(gen, store, func(f string, a ...any) { bad(filepath.Join(gen, doctable.FileName), f, a...) })
	}
	if man.Dense != nil {
		v, err := openVectors(ctx, eng.Vectors, g, man, store)
		if err != nil {
			bad(hnswPath(gen), "%v", err)
		} else {
			defer v.Close()
			missing, extra := 0, 0
			for k := 0; k < store.Len(); k++ {
				in, err := v.Has(ctx, uint32(k))
				if err != nil {
					bad(hnswPath(gen), "key %d: %v", k, err)
					break
				}
				switch dead := store.Tombstones().Has(uint32(k)); {
				case !dead && !in:
					missing++
				case dead && in:
					extra++
				}
			}
			if missing > 0 || extra > 0 || v.Live() != store.Live() {
				bad(hnswPath(gen), "%d live vectors for %d live passages: %d passages have none, %d tombstoned passages still have one",
					v.Live(), store.Live(), missing, extra)
			}
		}
	}
	if bleveDamaged {
		bad(lexicalDir(gen, man.Options.Lexical), "not opened: its files do not match the manifest")
		return rep, nil
	}
	idx, err := eng.Lexical.Open(ctx, g, backend.Scoring{}, store)
	if err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			bad(de.Path, "%s", de.What)
		} else {
			bad(lexicalDir(gen, man.Options.Lexical), "opening: %v", err)
		}
		return rep, nil
	}
	defer idx.Close()
	if err := checkBM25Keys(ctx, idx, store, func(f string, a ...any) { bad(lexicalDir(gen, man.Options.Lexical), f, a...) }); err != nil {
		return nil, err
	}
	// An engine that keeps statistics of its deletions beside its index (postings) checks
	// them against the index.
	if c, ok := idx.(backend.DeletedCountsChecker); ok {
		if err := c.CheckDeletedCounts(ctx); err != nil {
			bad(lexicalDir(gen, man.Options.Lexical), "%v", err)
		}
	}
	return rep, nil
}

// checkDocTable checks that the document table lists exactly the live keys, each once.
func checkDocTable(gen string, store *kpst.Store, bad func(string, ...any)) {
	docs, err := doctable.Read(filepath.Join(gen, doctable.FileName))
	if err != nil {
		bad("%v", err)
		return
	}
	seen := make([]bool, store.Len())
	n := 0
	for id, e := range docs {
		for _, k := range e.Keys {
			switch {
			case int(k) >= store.Len():
				bad("document %q: key %d beyond the store", id, k)
				return
			case store.Tombstones().Has(k):
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
	if n != store.Live() {
		bad("lists %d passages, the store has %d live", n, store.Live())
	}
}

// checkBM25Keys checks that the lexical part holds the live keys of the store and nothing else.
func checkBM25Keys(ctx context.Context, idx backend.LexicalReader, store *kpst.Store, bad func(string, ...any)) error {
	count, err := idx.Docs(ctx)
	if err != nil {
		bad("doc count: %v", err)
		return nil
	}
	if int(count) != store.Live() {
		bad("%d documents, passage store has %d live passages", count, store.Live())
	}
	const chunk = 1000
	missing, extra := 0, 0
	n := store.Len()
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
			in := found[k-lo]
			switch dead := store.Tombstones().Has(uint32(k)); {
			case !dead && !in:
				missing++
			case dead && in:
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
