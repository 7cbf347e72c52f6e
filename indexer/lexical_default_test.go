package indexer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/postingsbm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// TestDefaultLexicalIsPostings: a build that names no lexical engine writes Kairos's postings
// and records them in the manifest; a resumed build without a name keeps them.
func TestDefaultLexicalIsPostings(t *testing.T) {
	if DefaultLexical != LexicalPostings {
		t.Fatalf("DefaultLexical = %q, want %q", DefaultLexical, LexicalPostings)
	}
	dir := t.TempDir()
	if _, err := Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: scifactHead(t, 20)}}}); err != nil {
		t.Fatal(err)
	}
	gen := mustCurrent(t, dir)
	m, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	if m.Options.Lexical != LexicalPostings || m.LexicalEngine() != LexicalPostings {
		t.Fatalf("manifest lexical %q (engine %q), want %q", m.Options.Lexical, m.LexicalEngine(), LexicalPostings)
	}
	if segs, _ := filepath.Glob(filepath.Join(postingsbm25.Dir(gen), "*.kpo")); len(segs) == 0 {
		t.Errorf("no postings segment in %s", postingsbm25.Dir(gen))
	}
	if _, err := os.Stat(blevebm25.Dir(gen)); !os.IsNotExist(err) {
		t.Errorf("a default build wrote bleve's directory %s (%v)", blevebm25.Dir(gen), err)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, ok := g.Lexical.(*postingsbm25.Reader); !ok {
		t.Errorf("opened with %T, want the postings reader", g.Lexical)
	}
	verifyOK(t, gen)
}

// dropFirstAddOne writes the first n+1 SciFact documents less the first: an update from the
// first n deletes one document and adds one. It returns the file and the deleted id.
func dropFirstAddOne(t *testing.T, n int) (string, string) {
	t.Helper()
	f, err := os.Open(scifactHead(t, n+1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	sc.Scan()
	var first struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal(sc.Bytes(), &first); err != nil || first.ID == "" {
		t.Fatalf("first SciFact record: %q, %v", first.ID, err)
	}
	path := filepath.Join(t.TempDir(), "next.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for sc.Scan() {
		fmt.Fprintf(out, "%s\n", sc.Bytes())
	}
	return path, first.ID
}

// TestBleveIndexKeepsBleve: an index built with --lexical bleve, and one whose manifest names
// no engine (written before postings became the default), opens with bleve, updates (one
// document added, one deleted), compacts and verifies, and stays a bleve index throughout.
func TestBleveIndexKeepsBleve(t *testing.T) {
	const n = 20
	next, gone := dropFirstAddOne(t, n)
	for _, recorded := range []string{LexicalBleve, ""} {
		t.Run("manifest lexical "+fmt.Sprintf("%q", recorded), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: scifactHead(t, n)}}, Build: BuildOptions{Lexical: LexicalBleve}}); err != nil {
				t.Fatal(err)
			}
			if recorded == "" { // as an index of an earlier release records bleve
				gen := mustCurrent(t, dir)
				m, err := manifest.Read(gen)
				if err != nil {
					t.Fatal(err)
				}
				m.Options.Lexical = ""
				if err := manifest.Write(gen, m); err != nil {
					t.Fatal(err)
				}
			}
			check := func(step string, docs int) {
				t.Helper()
				gen := mustCurrent(t, dir)
				verifyOK(t, gen)
				g, err := openDir(dir)
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				defer g.Close()
				if _, ok := g.Lexical.(*blevebm25.Reader); !ok {
					t.Errorf("%s: opened with %T, want bleve's reader", step, g.Lexical)
				}
				if g.Manifest.Options.Lexical != recorded || g.Manifest.LexicalEngine() != LexicalBleve {
					t.Errorf("%s: manifest lexical %q (engine %q), want %q (bleve)", step, g.Manifest.Options.Lexical, g.Manifest.LexicalEngine(), recorded)
				}
				if _, err := os.Stat(postingsbm25.Dir(gen)); !os.IsNotExist(err) {
					t.Errorf("%s: a bleve index has a postings directory (%v)", step, err)
				}
				if g.Manifest.Counts.Documents != docs {
					t.Errorf("%s: %d documents, want %d", step, g.Manifest.Counts.Documents, docs)
				}
			}
			check("build", n)
			sum, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: next}}}, DeleteMissing: true, CompactRatio: -1})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Update.Added != 1 || sum.Update.Deleted != 1 {
				t.Fatalf("update: %+v, want 1 added and 1 deleted", *sum.Update)
			}
			check("update", n)
			g, err := openDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			g.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error { ids = append(ids, p.DocID); return nil })
			g.Close()
			if slices.Contains(ids, gone) {
				t.Errorf("deleted document %s is live", gone)
			}
			if _, err := compactIndex(ctx, dir, nil); err != nil {
				t.Fatal(err)
			}
			check("compact", n)
		})
	}
}
