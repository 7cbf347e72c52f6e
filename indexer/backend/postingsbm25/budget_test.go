package postingsbm25

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
)

// TestRAMBudgetRanksAsOneBuffer builds the SciFact corpus under small bounds (a flush every
// few dozen passages, written in the background while passages go on into the next part,
// merged ten at a time and then all at Commit) and with the defaults (a single flush), and
// checks that both leave one segment and that every SciFact query gets the same hits with
// the same scores. Each bound is the only one that flushes: the smallest RAM budget, and a
// bound on the postings of a part.
func TestRAMBudgetRanksAsOneBuffer(t *testing.T) {
	ps := sciFactPassages(t)
	ctx := context.Background()
	root := t.TempDir()
	build := func(name string, e Engine) (backend.Gen, backend.LexicalCommit, int) {
		t.Helper()
		g := backend.Gen{Name: name, Dir: filepath.Join(root, name)}
		lw, err := e.Begin(ctx, g, nil, backend.LexicalBegin{Analyzer: "en"})
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
		c, err := w.Commit(ctx, backend.CommitOptions{})
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
	large, cl, _ := build("large", Engine{})
	if cl.Docs != len(ps) {
		t.Fatalf("counts: large budget %+v, want %d passages", cl, len(ps))
	}
	sc := backend.Scoring{Params: backend.BM25Params{K1: 1.2, B: 0.4}, Stats: backend.CollectionStats{Docs: cl.Docs, Tokens: cl.TokensAdded}}
	an, err := langanalysis.New("en")
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Open(ctx, large.Dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	var queries []backend.LexicalQuery
	for _, r := range sciFact(t, "queries.jsonl", 1<<20) {
		var terms []string
		for _, tok := range an.Analyze([]byte(r["text"].(string))) {
			terms = append(terms, string(tok.Term))
		}
		queries = append(queries, backend.LexicalQuery{Terms: distinct(terms), N: 10})
	}
	for _, tc := range []struct {
		name   string
		engine Engine
	}{
		{"ram-budget", Engine{RAMBudget: postings.MinRAMBudget}},
		// SciFact: about 120 distinct terms a passage; a buffer to match (the default's
		// 2Mi postings, 32 MiB, would be allocated for every part)
		{"max-postings", Engine{MaxPostings: 2000, MaxBufferedPostings: 500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small, cs, parts := build(tc.name, tc.engine)
			if parts < 2*mergeFactor {
				t.Fatalf("the small bound made %d parts, too few to test merges of merges", parts)
			}
			if cs.Docs != cl.Docs || cs.TokensAdded != cl.TokensAdded {
				t.Fatalf("counts: small bound %+v, large %+v", cs, cl)
			}
			rs, err := Open(ctx, small.Dir, sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rs.Close()
			hits := 0
			for _, q := range queries {
				want, err := rl.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := rs.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("query %q:\nsmall bound %v\nlarge budget %v", q.Terms, got, want)
				}
				hits += len(want)
			}
			if hits == 0 {
				t.Fatal("no query found anything")
			}
			t.Logf("%d passages, %d parts flushed or merged under the small bound, %d hits equal", len(ps), parts, hits)
		})
	}
}

// sciFactPassages returns the SciFact abstracts as one passage each.
func sciFactPassages(t *testing.T) []corpus.Passage {
	var ps []corpus.Passage
	for _, r := range sciFact(t, "corpus.jsonl", 1<<20) {
		id := r["_id"].(string)
		ps = append(ps, corpus.Passage{ID: id + "#0", DocID: id, Text: r["title"].(string) + " | " + r["text"].(string)})
	}
	return ps
}

// TestAbortWhileAPartIsWritten aborts builds whose full parts are being written in the
// background (a part every 2,000 postings, about 17 passages) at several points, and checks
// that each leaves nothing in its lexical directory: Abort waits for the part being written
// and removes it with the others.
func TestAbortWhileAPartIsWritten(t *testing.T) {
	ps := sciFactPassages(t)
	ctx := context.Background()
	for _, n := range []int{40, 333, 1000} {
		g := backend.Gen{Name: fmt.Sprintf("g%d", n), Dir: filepath.Join(t.TempDir(), "gen")}
		lw, err := Engine{MaxPostings: 2000, MaxBufferedPostings: 500}.Begin(ctx, g, nil, backend.LexicalBegin{Analyzer: "en"})
		if err != nil {
			t.Fatal(err)
		}
		w := lw.(*Writer)
		for lo := 0; lo < n; lo += 20 {
			b := w.NewBatch()
			for i := lo; i < min(lo+20, n); i++ {
				if err := b.Add(uint32(i+1), &ps[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		w.mu.Lock() // a part's background write may be numbering a merge
		parts := w.partSeq
		w.mu.Unlock()
		if parts < 2 {
			t.Fatalf("%d passages: %d parts, want a flush before the abort", n, parts)
		}
		w.Abort()
		entries, err := os.ReadDir(Dir(g.Dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("%d passages: %s left behind after Abort", n, e.Name())
		}
		b := w.NewBatch()
		if err := b.Add(uint32(n+1), &ps[n]); err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(ctx, b); err == nil {
			t.Errorf("%d passages: Apply after Abort succeeded", n)
		}
	}
}
