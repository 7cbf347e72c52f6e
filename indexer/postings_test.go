package indexer

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// lexicalTop returns the ids of the n best passages for q through the generation's lexical
// engine, with their scores rounded to 1e-9.
func lexicalTop(t testing.TB, g *Generation, q string, n int) []string {
	t.Helper()
	var terms []string
	seen := map[string]bool{}
	an, err := g.Manifest.TextAnalyzer()
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range an.Analyze([]byte(q)) {
		if s := string(tok.Term); !seen[s] {
			seen[s] = true
			terms = append(terms, s)
		}
	}
	hits, err := g.Lexical.Search(context.Background(), backend.LexicalQuery{Terms: terms, N: n})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		p, err := g.Passages.Get(t.Context(), h.Key)
		if err != nil {
			t.Fatal(err)
		}
		if isDead(t, g, h.Key) {
			t.Errorf("query %q: hit %s is tombstoned", q, p.ID)
		}
		out = append(out, p.ID)
	}
	return out
}

// TestPostingsLifecycle: an index on the postings engine is updated, deleted from and
// compacted in the postings engine (the manifest says so, the files are there), verifies at
// every step, never returns a replaced passage, and once compacted ranks exactly as a fresh
// build of the same documents.
func TestPostingsLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compares with a fresh build (TestConformance updates, deletes and compacts on the postings engine under -short)")
	}
	older, newer, _, changed, _ := scifactRevisions(t)
	ctx := context.Background()
	dir, fresh := t.TempDir(), t.TempDir()
	opts := func(d, in string) Options {
		return Options{Dir: d, Inputs: []InputSpec{{Path: in, Options: corpus.Options{Source: "scifact"}}}, Build: BuildOptions{Lexical: LexicalPostings}}
	}
	if _, err := Build(ctx, opts(dir, older)); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, opts(fresh, newer)); err != nil {
		t.Fatal(err)
	}
	// An update naming another engine is refused; naming none keeps the index's.
	other := opts(dir, newer)
	other.Build.Lexical = LexicalBleve
	if _, err := updateIndex(ctx, UpdateOptions{Options: other}); err == nil || !strings.Contains(err.Error(), "rebuild it to change engines") {
		t.Fatalf("update with --lexical bleve: %v", err)
	}
	up := opts(dir, newer)
	up.Build.Lexical = ""
	sum, err := updateIndex(ctx, UpdateOptions{Options: up, DeleteMissing: true, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.PassagesDeleted == 0 {
		t.Fatal("the update replaced nothing")
	}
	gen := mustCurrent(t, dir)
	verifyOK(t, gen)
	m, err := manifest.Read(gen)
	if err != nil || m.Options.Lexical != LexicalPostings {
		t.Fatalf("updated manifest: lexical %q, %v", m.Options.Lexical, err)
	}
	if segs, _ := filepath.Glob(filepath.Join(postingsbm25.Dir(gen), "*.kpo")); len(segs) != 2 {
		t.Fatalf("updated generation has %d segments, want the base's and its own: %v", len(segs), segs)
	}
	g := openScored(t, dir)
	for id := range changed {
		// A changed document's old text ("Earlier draft. ...") is tombstoned: lexicalTop fails
		// on any tombstoned hit.
		lexicalTop(t, g, "Earlier draft "+id, 50)
	}
	g.Close()
	if _, err := compactIndex(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, mustCurrent(t, dir))
	gc := openScored(t, dir)
	defer gc.Close()
	gf := openScored(t, fresh)
	defer gf.Close()
	if gc.Manifest.Options.Lexical != LexicalPostings {
		t.Fatalf("compacted manifest: lexical %q", gc.Manifest.Options.Lexical)
	}
	for _, q := range []string{"vitamin D deficiency", "Earlier draft of a study", "tumour suppressor p53 mutations in cancer"} {
		// Compare passage texts: keys differ between the two indexes.
		texts := func(g *Generation, ids []string) []string {
			byID := map[string]string{}
			g.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error { byID[p.ID] = p.Text; return nil })
			var out []string
			for _, id := range ids {
				out = append(out, id+" "+byID[id])
			}
			return out
		}
		if a, b := texts(gc, lexicalTop(t, gc, q, 10)), texts(gf, lexicalTop(t, gf, q, 10)); !reflect.DeepEqual(a, b) {
			t.Errorf("%q: compacted update ranks %v, fresh build %v", q, a, b)
		}
	}
}

// openScored opens the live generation of dir to score with Kairos's default k1 and b.
func openScored(t testing.TB, dir string) *Generation {
	t.Helper()
	g, err := openReader(context.Background(), dir, ReadOptions{BM25: backend.BM25Params{K1: 1.2, B: 0.4}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestUnknownLexicalEngine: a build naming an engine that does not exist fails before it
// writes anything.
func TestUnknownLexicalEngine(t *testing.T) {
	dir := t.TempDir()
	_, err := Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: scifactHead(t, 10)}}, Build: BuildOptions{Lexical: "lucene"}})
	if err == nil || !strings.Contains(err.Error(), `unknown lexical engine "lucene" (want postings or bleve)`) {
		t.Fatalf("got %v", err)
	}
	// qdrant is an engine of the table, but not a local one: the error says where it lives
	// instead of calling it unknown.
	_, err = Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: scifactHead(t, 10)}}, Build: BuildOptions{Lexical: LexicalQdrant}})
	if err == nil || !strings.Contains(err.Error(), `lexical engine "qdrant" is not a local one`) || !strings.Contains(err.Error(), "qdrant:// location") {
		t.Fatalf("--lexical qdrant on a directory: %v", err)
	}
	if _, err := manifest.Current(dir); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("a refused build left an index: %v", err)
	}
}
