package live_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/sharedtest"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

// Open a live index, search it in its default mode, and reload it after an update: what
// kairos serve does for each --index (with the models of --model and --cross-model).
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "live-example-")
	defer os.RemoveAll(dir)
	loc := indexer.Location{Dir: filepath.Join(dir, "index")}
	b, err := indexer.Open(ctx, loc)
	if err != nil {
		fmt.Println(err)
		return
	}
	faq := sharedtest.Join("data/faq-covid-deepset/faq_covidbert.csv")
	if _, err := b.Build(ctx, indexer.Options{Inputs: []indexer.InputSpec{{Path: faq}}}); err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	ix, err := live.Open(ctx, loc, live.Options{}) // no encoder: BM25 only
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	res, err := ix.Search(ctx, rerank.Query{Request: search.Request{Text: "Should I wear a mask?", K: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Hits[0].Title)
	_, err = ix.Search(ctx, rerank.Query{Request: search.Request{Text: "mask", K: 1, Mode: search.ModeHybrid}})
	fmt.Println(err)

	added := filepath.Join(dir, "added.jsonl")
	os.WriteFile(added, []byte(`{"_id":"n1","title":"Masks","text":"Wear a mask indoors."}`+"\n"), 0o644)
	if _, err := b.Update(ctx, indexer.UpdateOptions{Options: indexer.Options{Inputs: []indexer.InputSpec{{Path: added}}}}); err != nil {
		fmt.Println(err)
		return
	}
	if err := ix.Reload(ctx); err != nil {
		fmt.Println(err)
		return
	}
	l := ix.Acquire()
	defer l.Release()
	fmt.Println("mode", l.Mode(), "generation", l.Stats().Generation, "reloads", l.Reloads())
	// Output:
	// Should I wear a mask to protect myself?
	// mode hybrid is not supported: this index has no dense vectors: build them with kairos index --model DIR, or ask for mode bm25
	// mode bm25 generation 2 reloads 1
}
