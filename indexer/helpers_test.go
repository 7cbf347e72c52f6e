package indexer

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store/local"
)

// The tests of this package name an index by the string of its location, as the commands
// do: these open it (Open) and run one operation on it.

// openIndex opens the index at loc (a directory or a qdrant:// location).
func openIndex(ctx context.Context, loc string) (*Index, error) {
	l, err := ParseLocation(loc)
	if err != nil {
		return nil, err
	}
	return Open(ctx, l)
}

// Build opens the index opts.Dir names and builds it (Index.Build): the string form of a
// build, which only these tests use (callers hold a Location: Open, then Index.Build).
func Build(ctx context.Context, opts Options) (*Summary, error) {
	return onIndex(ctx, opts.Dir, func(ix *Index) (*Summary, error) { return ix.Build(ctx, opts) })
}

// onIndex runs fn on the index at loc and closes it.
func onIndex[T any](ctx context.Context, loc string, fn func(ix *Index) (T, error)) (T, error) {
	ix, err := openIndex(ctx, loc)
	if err != nil {
		var zero T
		return zero, err
	}
	defer ix.Close()
	return fn(ix)
}

func resumeBuild(ctx context.Context, opts Options) (*Summary, error) {
	return onIndex(ctx, opts.Dir, func(ix *Index) (*Summary, error) { return ix.Resume(ctx, opts) })
}

func updateIndex(ctx context.Context, opts UpdateOptions) (*Summary, error) {
	return onIndex(ctx, opts.Dir, func(ix *Index) (*Summary, error) { return ix.Update(ctx, opts) })
}

func deleteDocs(ctx context.Context, opts UpdateOptions, ids []string) (*Summary, error) {
	return onIndex(ctx, opts.Dir, func(ix *Index) (*Summary, error) { return ix.Delete(ctx, opts, ids) })
}

func compactIndex(ctx context.Context, loc string, logger *slog.Logger) (*Summary, error) {
	return onIndex(ctx, loc, func(ix *Index) (*Summary, error) { return ix.Compact(ctx, CompactOptions{Logger: logger}) })
}

// compactWith is Compact with every option (the fault tests set faultAt).
func compactWith(ctx context.Context, opts *Options) (*Summary, error) {
	return onIndex(ctx, opts.Dir, func(ix *Index) (*Summary, error) { return ix.compact(ctx, opts) })
}

func verifyIndex(ctx context.Context, loc string) (*VerifyReport, error) {
	return onIndex(ctx, loc, func(ix *Index) (*VerifyReport, error) { return ix.Verify(ctx) })
}

func liveManifest(ctx context.Context, loc string) (*Manifest, error) {
	return onIndex(ctx, loc, func(ix *Index) (*Manifest, error) { return ix.Manifest(ctx) })
}

func pendingCheckpoint(ctx context.Context, loc string) (*CheckpointInfo, error) {
	return onIndex(ctx, loc, func(ix *Index) (*CheckpointInfo, error) { return ix.Checkpoint(ctx) })
}

// openReader opens the live generation of the index at loc; the Generation outlives the
// Index (it holds its own connection).
func openReader(ctx context.Context, loc string, o ReadOptions) (*Generation, error) {
	return onIndex(ctx, loc, func(ix *Index) (*Generation, error) { return ix.Reader(ctx, o) })
}

// openDir opens the live generation of the local index at dir, checked cheaply.
func openDir(dir string) (*Generation, error) {
	return openReader(context.Background(), dir, ReadOptions{})
}

// openLive opens the live generation of the index at dir with the default BM25 parameters.
func openLive(t *testing.T, dir string) *Generation {
	t.Helper()
	g, err := openReader(context.Background(), dir, ReadOptions{BM25: backend.DefaultBM25()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// tmpSuffix marks a local generation being written (g-N.tmp).
const tmpSuffix = ".tmp"

// liveGen is the number of the live generation of the local index at dir, 0 for none.
func liveGen(dir string) int {
	n, _ := local.New(dir).Live(context.Background())
	return n
}

// checkpointDir is the directory of the pending checkpoint generation of the local index at
// dir, "" when there is none.
func checkpointDir(dir string) (string, error) {
	cp, err := manifest.ReadCheckpoint(dir)
	if err != nil || cp == nil {
		return "", err
	}
	return filepath.Join(dir, cp.Generation), nil
}

// verifyGenDir verifies the local generation in directory gen (live or not).
func verifyGenDir(ctx context.Context, gen string) (*VerifyReport, error) {
	n, _ := manifest.ParseGeneration(filepath.Base(gen))
	return local.New(filepath.Dir(gen)).Verify(ctx, n)
}

// lockDir takes the writer lock of the local index at dir.
func lockDir(dir string) (func(), error) { return local.New(dir).Lock(context.Background()) }

// isDead reports whether key has no live passage in g.
func isDead(t testing.TB, g *Generation, key uint32) bool {
	t.Helper()
	dead, err := g.Passages.Dead(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return dead
}

// inLexicalDir reports whether name, a file of the manifest of the local generation at gen,
// belongs to its lexical part.
func inLexicalDir(gen string, man *Manifest, name string) bool {
	dir := blevebm25.Dir(gen)
	if man.LexicalEngine() == LexicalPostings {
		dir = postingsbm25.Dir(gen)
	}
	rel, err := filepath.Rel(gen, dir)
	return err == nil && strings.HasPrefix(name, filepath.ToSlash(rel)+"/")
}

// hnswPath is the graph file of the local generation at gen.
func hnswPath(gen string) string { return hnswvec.Path(gen) }
