package indexer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

func shared(t testing.TB, rel string) string {
	t.Helper()
	root := os.Getenv("KAIROS_SHARED")
	if root == "" {
		root = "../../shared"
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared data missing (set KAIROS_SHARED or put ../shared beside the repo): %v", err)
	}
	return p
}

const enwiki = "data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

func build(t *testing.T, dir string, inputs ...string) *Summary {
	t.Helper()
	opts := Options{Dir: dir}
	for _, in := range inputs {
		opts.Inputs = append(opts.Inputs, InputSpec{Path: in})
	}
	sum, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return sum
}

func TestBuildEnwiki(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestBuildStages builds the same dump, recompressed as a multistream one")
	}
	dir := t.TempDir()
	sum := build(t, dir, shared(t, enwiki))
	c := sum.Counts
	if c.Documents != 106 || c.Skipped[corpus.SkipRedirect] != 99 || c.Skipped[corpus.SkipNamespace] != 1 || c.Bad != 0 {
		t.Fatalf("counts = %+v, want 106 documents, 99 redirects, 1 namespace, 0 bad", c)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Passages.Len() != c.Passages || c.Passages < 1000 {
		t.Fatalf("store has %d passages, summary %d", g.Passages.Len(), c.Passages)
	}
	n, err := g.Lexical.Docs(context.Background())
	if err != nil || n != c.Passages {
		t.Fatalf("the lexical index has %d docs (%v), want %d", n, err, c.Passages)
	}
	docs := map[string]bool{}
	err = g.Passages.Each(t.Context(), func(key uint32, p corpus.Passage) error {
		docs[p.DocID] = true
		if w := len(strings.Fields(p.Text)); w > 120 || w == 0 {
			t.Errorf("%s: %d words", p.ID, w)
		}
		if !strings.HasPrefix(p.Text, p.Title) {
			t.Errorf("%s does not start with its title %q", p.ID, p.Title)
		}
		for _, bad := range []string{"{{", "}}", "{|", "<ref"} {
			if strings.Contains(p.Text, bad) {
				t.Errorf("%s contains %q", p.ID, bad)
			}
		}
		if p.Date.IsZero() || p.URL == "" {
			t.Errorf("%s: missing date or url", p.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 106 {
		t.Errorf("passages come from %d documents, want 106", len(docs))
	}
	for name, want := range g.Manifest.Files {
		got, err := fileSHA256(filepath.Join(g.Dir, name))
		if err != nil || got != want {
			t.Errorf("manifest entry %s: %+v, file %+v (%v)", name, want, got, err)
		}
	}
}

// A failed build must leave the previous generation live and remove its own temporary files.
func TestFailedBuildKeepsOldIndex(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, shared(t, "data/faq-covid-deepset/faq_covidbert.csv"))
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"_id\":\"1\",\"title\":\"a\",\"text\":\"fine\"}\n{broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: bad}}})
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl: line 2") {
		t.Fatalf("err = %v, want the bad line named", err)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatalf("old index not usable after failed build: %v", err)
	}
	defer g.Close()
	if g.Manifest.Counts.Documents != 213 || g.Manifest.Generation != 1 {
		t.Fatalf("live generation %d with %d documents, want generation 1 with 213", g.Manifest.Generation, g.Manifest.Counts.Documents)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), tmpSuffix) {
			t.Errorf("temporary %s left behind", e.Name())
		}
	}

	// With SkipBad the same input builds, and the bad record is counted and listed.
	sum, err := Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: bad}}, SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts.Documents != 1 || sum.Counts.Bad != 1 || len(sum.BadRecords) != 1 || !strings.Contains(sum.BadRecords[0], "line 2") {
		t.Fatalf("summary %+v %q", sum.Counts, sum.BadRecords)
	}
	if sum.Generation != 2 {
		t.Fatalf("generation %d, want 2", sum.Generation)
	}
}

func TestCancelledBuild(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: shared(t, enwiki)}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := openDir(dir); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("Open after cancelled first build: %v, want ErrNoIndex", err)
	}
}

func TestDamageDetected(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, shared(t, "data/faq-covid-deepset/faq_covidbert.csv"))
	gen, err := manifest.Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	man0, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(gen, man0.Segments[0].Name)
	b, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	b[100] ^= 0xff
	if err := os.WriteFile(store, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openDir(dir); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "index damaged: "+store+": sha256 ") {
		t.Fatalf("Open of damaged store: %v, want index damaged: %s: sha256 ...", err, store)
	}
	man := filepath.Join(gen, manifest.FileName)
	mb, _ := os.ReadFile(man)
	os.WriteFile(man, []byte(strings.Replace(string(mb), `"documents": 213`, `"documents": 214`, 1)), 0o644)
	if _, err := manifest.Read(gen); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("edited manifest: %v, want checksum mismatch", err)
	}
}

// TestVerify damages files of bleve's index, so it builds with bleve; TestDamagedFiles covers
// the postings engine's files.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, Inputs: []InputSpec{{Path: shared(t, "data/faq-covid-deepset/faq_covidbert.csv")}}, Build: BuildOptions{Lexical: LexicalBleve}}
	if _, err := Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	rep, err := verifyIndex(context.Background(), dir)
	if err != nil || !rep.OK() || rep.Passages == 0 || rep.Files < 3 {
		t.Fatalf("fresh index: %+v, %v", rep, err)
	}
	gen, _ := manifest.Current(dir)
	// Damage: one bleve file altered, and a stray file.
	var victim string
	filepath.WalkDir(filepath.Join(gen, blevebm25.Name), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".zap") {
			victim = p
		}
		return nil
	})
	if victim == "" {
		t.Fatal("no segment file found")
	}
	b, _ := os.ReadFile(victim)
	b[len(b)/2] ^= 1
	os.WriteFile(victim, b, 0o644)
	os.WriteFile(filepath.Join(gen, blevebm25.Name, "stray"), []byte("x"), 0o644)
	rep, err = verifyIndex(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var gotSHA, gotStray bool
	for _, p := range rep.Problems {
		gotSHA = gotSHA || (p.Path == victim && strings.Contains(p.What, "sha256"))
		gotStray = gotStray || strings.HasSuffix(p.Path, "stray") && strings.Contains(p.What, "not in the manifest")
	}
	if !gotSHA || !gotStray {
		t.Fatalf("problems %v: want the altered segment and the stray file", rep.Problems)
	}
}
