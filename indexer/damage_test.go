package indexer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// damage is one way a file gets damaged on disk.
type damage struct {
	name  string
	apply func(path string) error
}

// damages are the corruptions the reliability issue found panicking bleve, and their
// siblings: every one is applied to every file kind.
var damages = []damage{
	{"truncated to half", func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		return os.Truncate(p, fi.Size()/2)
	}},
	{"padded by 4 KiB", func(p string) error {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(make([]byte, 4096))
		return errors.Join(err, f.Close())
	}},
	{"byte flipped in the middle", func(p string) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b[len(b)/2] ^= 0x5a
		return os.WriteFile(p, b, 0o644)
	}},
	{"zeroed", func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, make([]byte, fi.Size()), 0o644)
	}},
	{"removed", os.Remove},
}

// fileKind names one file of a kind in a generation: a function from the generation
// directory to the file.
type fileKind struct {
	kind string
	file func(t testing.TB, gen string) string
}

// postingsFileKinds are the files of the postings engine, damaged in an index built with it
// (the other kinds are the same in both engines and damaged once, under bleve).
var postingsFileKinds = []fileKind{
	{"postings segment (.kpo)", func(t testing.TB, gen string) string { return firstMatch(t, gen, "lexical/*.kpo") }},
	{"postings deleted set", func(t testing.TB, gen string) string { return filepath.Join(gen, "lexical/deleted.ktmb") }},
}

// fileKinds are the files of an index built with bleve (LexicalBleve).
var fileKinds = []fileKind{
	{"bleve segment (.zap)", func(t testing.TB, gen string) string { return firstMatch(t, gen, "bm25/store/*.zap") }},
	{"bleve root.bolt", func(t testing.TB, gen string) string { return filepath.Join(gen, "bm25/store/root.bolt") }},
	{"bleve index_meta.json", func(t testing.TB, gen string) string { return filepath.Join(gen, "bm25/index_meta.json") }},
	{"passage store", func(t testing.TB, gen string) string { return firstMatch(t, gen, "passages-*.kpst") }},
	{"document table", func(t testing.TB, gen string) string { return filepath.Join(gen, doctable.FileName) }},
	{"tombstones", func(t testing.TB, gen string) string { return filepath.Join(gen, tombstones.FileName) }},
	{"hnsw graph", func(t testing.TB, gen string) string { return filepath.Join(gen, hnswvec.Name) }},
	{"manifest", func(t testing.TB, gen string) string { return filepath.Join(gen, manifest.FileName) }},
}

func firstMatch(t testing.TB, gen, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(gen, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no %s in %s (%v)", pattern, gen, err)
	}
	sort.Strings(m)
	return m[0]
}

// damageFixture builds a small dense index of SciFact abstracts with one document deleted, so
// that every file kind exists and the tombstones are not empty, in the lexical engine named
// ("": the default).
func damageFixture(t testing.TB, lexical string) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	opts := Options{Dir: dir, Inputs: []InputSpec{{Path: scifactHead(t, 150)}}, Build: BuildOptions{BatchSize: 50, Lexical: lexical},
		EmbedInline: true, Encoder: &countingEncoder{dim: 16}, HNSW: fastHNSW}
	if _, err := Build(ctx, opts); err != nil {
		t.Fatal(err)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.Passages.Get(t.Context(), 0)
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	id := p.DocID
	opts.Inputs = nil
	if _, err := deleteDocs(ctx, UpdateOptions{Options: opts, CompactRatio: -1}, []string{id}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyTree copies the index directory src to dst (hard links would share the damage).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return atomicfile.Copy(path, filepath.Join(dst, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDamagedFiles damages every file kind in every way and checks that Open (cheap and full
// checks), Verify, Delete and Compact report "index damaged" naming the file, that nothing
// panics, and that a refused write leaves the live generation as it was.
func TestDamagedFiles(t *testing.T) {
	ctx := context.Background()
	for _, engine := range []struct {
		lexical string
		kinds   []fileKind
	}{{LexicalBleve, fileKinds}, {LexicalPostings, postingsFileKinds}} {
		clean := damageFixture(t, engine.lexical)
		for _, fk := range engine.kinds {
			damageKind(ctx, t, clean, fk)
		}
	}
}

// damageKind applies every damage to the file of kind fk in a copy of the index clean.
func damageKind(ctx context.Context, t *testing.T, clean string, fk fileKind) {
	for _, dm := range damages {
		t.Run(fk.kind+"/"+dm.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			copyTree(t, clean, dir)
			gen := mustCurrent(t, dir)
			path := fk.file(t, gen)
			if err := dm.apply(path); err != nil {
				t.Fatal(err)
			}
			for _, level := range []CheckLevel{CheckCheap, CheckFull} {
				g, err := openReader(ctx, dir, ReadOptions{Level: level})
				if err == nil {
					g.Close()
					t.Fatalf("open (level %d) of a damaged index succeeded", level)
				}
				if !errors.Is(err, ErrDamaged) || !strings.HasPrefix(err.Error(), "index damaged: "+path+": ") {
					t.Errorf("open (level %d): %v\nwant index damaged: %s: ...", level, err, path)
				}
			}
			rep, err := verifyIndex(ctx, dir)
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			named := false
			for _, p := range rep.Problems {
				named = named || p.Path == path
			}
			if !named {
				t.Errorf("verify does not name %s: %v", path, rep.Problems)
			}
			_, err = deleteDocs(ctx, UpdateOptions{Options: Options{Dir: dir}, CompactRatio: -1}, []string{"1"})
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("delete: %v, want index damaged", err)
			}
			if _, err := compactIndex(ctx, dir, nil); !errors.Is(err, ErrDamaged) {
				t.Errorf("compact: %v, want index damaged", err)
			}
			if got := mustCurrent(t, dir); got != gen {
				t.Errorf("a refused write moved CURRENT from %s to %s", gen, got)
			}
		})
	}
}

// TestOpenBM25ReportsDamage opens bleve directly on truncated segments, skipping the manifest
// checks, as a segment beyond the cheap hash budget would be: bleve panics inside (2.5) or fails
// (2.6), and blevebm25.Open must turn either into an index-damaged error naming the directory.
func TestOpenBM25ReportsDamage(t *testing.T) {
	dir := damageFixture(t, LexicalBleve)
	gen := mustCurrent(t, dir)
	if idx, err := blevebm25.Open(gen, backend.Scoring{}); err != nil {
		t.Fatalf("undamaged: %v", err)
	} else {
		idx.Close()
	}
	// Every segment: bleve may keep a merged-away segment file that no snapshot references.
	zaps, _ := filepath.Glob(filepath.Join(gen, "bm25/store/*.zap"))
	for _, z := range zaps {
		if err := damages[0].apply(z); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := blevebm25.Open(gen, backend.Scoring{})
	if err == nil {
		idx.Close()
		t.Fatal("bleve opened a truncated segment")
	}
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "index damaged: "+bm25Path(gen)+": unreadable (") {
		t.Errorf("got %v, want index damaged naming %s and what bleve said", err, bm25Path(gen))
	}
}
