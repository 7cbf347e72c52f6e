package postings_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/postings"
)

func Example() {
	dir, _ := os.MkdirTemp("", "postings-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "seg-000001.kpo")

	// The indexer writes a segment: passages in key order, with their analysed tokens.
	b, _ := postings.NewBuilder(path, postings.BuilderOptions{})
	passages := map[uint32][]string{
		1: {"rust", "never", "sleeps"},
		2: {"rust", "belt", "rust", "belt", "corn"},
		3: {"corn", "belt", "states"},
	}
	var tokens int64
	for key := uint32(1); key <= 3; key++ {
		b.Add(key, passages[key])
		tokens += int64(len(passages[key]))
	}
	if _, err := b.Finish(context.Background()); err != nil {
		fmt.Println(err)
		return
	}

	// search opens it (memory-mapped) and asks for the best passages.
	seg, err := postings.Open(path, postings.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer seg.Close()
	x, _ := postings.NewSearcher([]*postings.Segment{seg}, postings.SearcherOptions{})
	sc := postings.Scoring{K1: 1.2, B: 0.4, Docs: 3, Tokens: tokens}
	hits, err := x.Search(context.Background(), postings.Query{Terms: []string{"rust", "belt"}, K: 2}, sc)
	if err != nil {
		fmt.Println(err)
		return
	}
	// By hand: avg length ceil(11/3) = 4, idf ln(1.6) for both terms, query weight 1/sqrt(2);
	// passage 1 ties with passage 3 (one term, tf 1, length 3, coord 1/2) and wins by key.
	for _, h := range hits {
		fmt.Printf("passage %d: %.4f\n", h.Key, h.Score)
	}
	// Output:
	// passage 2: 0.4126
	// passage 1: 0.0959
}
