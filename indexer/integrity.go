package indexer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// ErrDamaged is wrapped by every error that reports a damaged index file: a file whose size or
// sha256 differs from the manifest, or one an engine could not read (bleve panicked).
var ErrDamaged = backend.ErrDamaged

// DamagedError names one damaged file of a generation and what is wrong with it.
type DamagedError = backend.DamagedError

// CheckLevel says how thoroughly a generation's files are checked against its manifest before
// any of them is parsed.
type CheckLevel int

const (
	// CheckCheap (the default of Open): the size of every file, and the sha256 of files in
	// ascending size order until CheapHashBudget bytes are hashed. Every small file (bleve's
	// root.bolt and index_meta.json, tombstones, the document table) is always hashed; the
	// big ones are hashed only while the budget lasts, so a small index is fully checked at
	// open and a large one costs at most the budget.
	CheckCheap CheckLevel = iota
	// CheckFull hashes every file (kairos verify, serve --verify).
	CheckFull
)

// CheapHashBudget is how many bytes CheckCheap hashes at most: about 0.1 s at the sha256
// speed of one core here, so `search` and `serve` stay quick to open.
const CheapHashBudget = 64 << 20

// checkFiles checks the files listed in man against the disk at level. It returns the first
// damaged file as a *DamagedError. Files the manifest does not list are not looked at here
// (VerifyGeneration reports them).
func checkFiles(ctx context.Context, gen string, man *Manifest, level CheckLevel) error {
	names := make([]string, 0, len(man.Files))
	for name := range man.Files {
		names = append(names, name)
	}
	// Smallest first, ties by name, so the budget always covers the same files.
	sort.Slice(names, func(i, j int) bool {
		a, b := man.Files[names[i]], man.Files[names[j]]
		if a.Size != b.Size {
			return a.Size < b.Size
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		path := filepath.Join(gen, filepath.FromSlash(name))
		want := man.Files[name]
		fi, err := os.Stat(path)
		if err != nil {
			return &DamagedError{Path: path, What: "listed in the manifest but cannot be read: " + backend.WithoutPath(err)}
		}
		if !fi.Mode().IsRegular() {
			return &DamagedError{Path: path, What: "not a regular file"}
		}
		if fi.Size() != want.Size {
			return &DamagedError{Path: path, What: fmt.Sprintf("size %d, manifest says %d", fi.Size(), want.Size)}
		}
	}
	budget := int64(CheapHashBudget)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := man.Files[name]
		if level == CheckCheap {
			if want.Size > budget {
				break
			}
			budget -= want.Size
		}
		path := filepath.Join(gen, filepath.FromSlash(name))
		got, err := fileSHA256(path)
		if err != nil {
			return &DamagedError{Path: path, What: "reading: " + backend.WithoutPath(err)}
		}
		if got.Size != want.Size || got.SHA256 != want.SHA256 {
			return &DamagedError{Path: path, What: fmt.Sprintf("sha256 %s, manifest says %s", got.SHA256, want.SHA256)}
		}
	}
	return nil
}

// damagedBM25File names the bleve file to blame when bleve panicked on gen: the first bleve
// file that fails a full check against the manifest, or the bleve directory when all match
// (the damage then predates the manifest, or the manifest has no sums).
func damagedBM25File(gen string, man *Manifest, cause *DamagedError) error {
	if man == nil {
		return cause
	}
	sub := &Manifest{Files: map[string]FileSum{}}
	for name, sum := range man.Files {
		if inLexicalDir(gen, man, name) {
			sub.Files[name] = sum
		}
	}
	if err := checkFiles(context.Background(), gen, sub, CheckFull); err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			return &DamagedError{Path: de.Path, What: de.What + "; bleve: " + cause.What}
		}
	}
	return cause
}
