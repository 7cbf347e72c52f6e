package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
)

// TestTiesRankByKey builds the same input in each lexical engine with different batch sizes
// (so different segment layouts and, in bleve, internal document numbers) and checks that passages with equal scores
// (identical passages of different documents) rank the same in every build, by passage key.
func TestTiesRankByKey(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, `{"_id":"filler-%d","title":"Filler %d","text":"ordinary words about topic %d and nothing else"}`+"\n", i, i, i)
		if i%10 == 3 { // four identical passages spread over the input
			fmt.Fprintf(&b, `{"_id":"twin-%d","title":"Twin","text":"zebra quokka tandem bicycle"}`+"\n", i)
		}
	}
	input := filepath.Join(t.TempDir(), "ties.jsonl")
	if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	type build struct {
		name    string
		batch   int
		lexical string
	}
	var builds []build
	for _, lex := range []string{indexer.LexicalBleve, indexer.LexicalPostings} {
		builds = append(builds, build{lex + "/one batch", 0, lex}, build{lex + "/batches of 1", 1, lex}, build{lex + "/batches of 7", 7, lex})
	}
	var first []string
	for _, bt := range builds {
		t.Run(bt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := indexer.Options{Inputs: []indexer.InputSpec{{Path: input}}}
			opts.Build.BatchSize, opts.Build.Lexical = bt.batch, bt.lexical
			if _, err := buildAt(context.Background(), at(dir), opts); err != nil {
				t.Fatal(err)
			}
			ix, err := Open(t.Context(), at(dir), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			for _, k := range []int{2, 3, 4} { // the cut falls inside the tie for k < 4
				hits, err := ix.Search(context.Background(), Request{Text: "zebra quokka tandem bicycle", K: k, Mode: ModeBM25})
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != k {
					t.Fatalf("k=%d: %d hits", k, len(hits))
				}
				var ids []string
				for i, h := range hits {
					if !strings.HasPrefix(h.Passage.DocID, "twin-") || h.Score != hits[0].Score {
						t.Fatalf("k=%d hit %d: %s score %v, want a twin scoring %v", k, i, h.Passage.DocID, h.Score, hits[0].Score)
					}
					ids = append(ids, h.Passage.ID)
				}
				if k == 4 {
					if first == nil {
						first = ids
					} else if strings.Join(ids, " ") != strings.Join(first, " ") {
						t.Errorf("ranking %v, first build ranked %v", ids, first)
					}
				} else if first != nil && strings.Join(ids, " ") != strings.Join(first[:k], " ") {
					t.Errorf("k=%d: %v, want the first %d of %v", k, ids, k, first)
				}
			}
		})
	}
}
