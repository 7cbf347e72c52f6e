package postingsbm25

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
)

// TestRAMBudgetRanksAsOneBuffer builds the SciFact corpus with the smallest RAM budget (a
// flush every few dozen passages, merged ten at a time and then all at Commit) and with the
// default one (a single flush), and checks that both leave one segment and that every
// SciFact query gets the same hits with the same scores.
func TestRAMBudgetRanksAsOneBuffer(t *testing.T) {
	var ps []corpus.Passage
	for _, r := range sciFact(t, "corpus.jsonl", 1<<20) {
		id := r["_id"].(string)
		ps = append(ps, corpus.Passage{ID: id + "#0", DocID: id, Text: r["title"].(string) + " | " + r["text"].(string)})
	}
	ctx := context.Background()
	root := t.TempDir()
	build := func(name string, budget int64) (backend.Gen, backend.LexicalCounts, int) {
		t.Helper()
		g := backend.Gen{Name: name, Dir: filepath.Join(root, name)}
		lw, err := Engine{RAMBudget: budget}.Begin(ctx, g, nil, "en")
		if err != nil {
			t.Fatal(err)
		}
		w := lw.(*Writer)
		for lo := 0; lo < len(ps); lo += 500 {
			b := w.NewBatch()
			for i := lo; i < min(lo+500, len(ps)); i++ {
				if err := b.Add(uint32(3*i+1), &ps[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		c, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		flushes := w.partSeq // read once Commit has ended the background merges, which number parts too
		files, err := filepath.Glob(filepath.Join(Dir(g.Dir), "seg-*"))
		if err != nil || len(files) != 1 || !strings.HasSuffix(files[0], segSuffix) {
			t.Fatalf("%s: files %v (%v), want one segment", name, files, err)
		}
		return g, c, flushes
	}
	small, cs, parts := build("small", postings.MinRAMBudget)
	large, cl, _ := build("large", 0)
	if parts < 2*mergeFactor {
		t.Fatalf("the small budget made %d parts, too few to test merges of merges", parts)
	}
	if cs != cl || cs.Docs != len(ps) {
		t.Fatalf("counts: small budget %+v, large %+v, want %d passages", cs, cl, len(ps))
	}
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}, Stats: backend.CollectionStats{Docs: cl.Docs, Tokens: cl.TokensAdded}}
	an, err := langanalysis.New("en")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Open(ctx, small.Dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	rl, err := Open(ctx, large.Dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	hits := 0
	for _, r := range sciFact(t, "queries.jsonl", 1<<20) {
		var terms []string
		for _, tok := range an.Analyze([]byte(r["text"].(string))) {
			terms = append(terms, string(tok.Term))
		}
		terms = distinct(terms)
		q := backend.LexicalQuery{Terms: terms, N: 10}
		want, err := rl.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("query %q:\nsmall budget %v\nlarge budget %v", r["text"], got, want)
		}
		hits += len(want)
	}
	if hits == 0 {
		t.Fatal("no query found anything")
	}
	t.Logf("%d passages, %d parts flushed or merged under the small budget, %d hits equal", len(ps), parts, hits)
}
