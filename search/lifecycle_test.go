package search

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
)

// Searches on an open Index keep their results while the index is updated, deleted from and
// compacted underneath (each a new generation), and an Index opened after each commit never
// returns a deleted or superseded passage. Run with -race.
func TestSearchDuringUpdateAndCompact(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := shared(t, faq)
	in := []indexer.InputSpec{{Path: src, Options: corpus.Options{Source: "faq"}}}
	index, err := indexer.Open(ctx, indexer.Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer index.Close()
	if _, err := index.Build(ctx, indexer.Options{Inputs: in, EmbedInline: true, Encoder: bow}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(t.TempDir(), "faq.csv")
	if err := os.WriteFile(newer, []byte(strings.ReplaceAll(string(b), "mask", "face covering")), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := []Request{
		{Text: "Should I wear a mask?", K: 5}, {Text: "incubation period", K: 5, Mode: ModeDense},
		{Text: "how does the virus spread", K: 5, Mode: ModeHybrid}, {Text: "face covering", K: 5},
	}
	ix, err := Open(t.Context(), at(dir), Options{Encoder: bow})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	baseline := make([][]Hit, len(queries))
	for i, q := range queries {
		if baseline[i], err = ix.Search(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := n % len(queries)
				got, err := ix.Search(ctx, queries[i])
				if err != nil {
					t.Errorf("search during update: %v", err)
					return
				}
				if !reflect.DeepEqual(got, baseline[i]) {
					t.Errorf("query %q changed under an open index", queries[i].Text)
					return
				}
			}
		}()
	}

	// After each commit a fresh Index sees only live passages.
	checkLive := func(stage string, deletedDocs map[string]bool, oldWord string) {
		t.Helper()
		nx, err := Open(t.Context(), at(dir), Options{Encoder: bow})
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		defer nx.Close()
		for _, q := range append(queries, Request{Text: oldWord, K: 50}, Request{Text: oldWord, K: 50, Mode: ModeDense}) {
			hits, err := nx.Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", stage, err)
			}
			for _, h := range hits {
				if deletedDocs[h.DocID] {
					t.Errorf("%s: hit %s of a deleted document", stage, h.ID)
				}
				if strings.Contains(strings.ToLower(h.Text), oldWord) {
					t.Errorf("%s: hit %s has the superseded text %q", stage, h.ID, oldWord)
				}
			}
		}
		if rep, err := index.Verify(ctx); err != nil || !rep.OK() {
			t.Fatalf("%s: verify %v %v", stage, err, rep.Problems)
		}
	}
	sum, err := index.Update(ctx, indexer.UpdateOptions{Options: indexer.Options{Inputs: []indexer.InputSpec{{Path: newer, Options: corpus.Options{Source: "faq"}}}, Encoder: bow}, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.Changed == 0 {
		t.Fatal("the edit changed no document")
	}
	checkLive("update", nil, "mask")
	deleted := map[string]bool{"1": true, "2": true, "3": true}
	if _, err := index.Delete(ctx, indexer.UpdateOptions{CompactRatio: -1}, []string{"1", "2", "3"}); err != nil {
		t.Fatal(err)
	}
	checkLive("delete", deleted, "mask")
	if _, err := index.Compact(ctx, indexer.CompactOptions{}); err != nil {
		t.Fatal(err)
	}
	checkLive("compact", deleted, "mask")
	close(stop)
	wg.Wait()
	if n := ix.Stats().Passages; n != ix.Manifest().Counts.Passages {
		t.Errorf("stats %d", n)
	}
}
