package search

import (
	"context"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// DocFreq counts the live passages holding a word as the index analyses it (any form of it:
// "vitamins" counts the passages of "vitamin"), every passage for a stop word, none for a word
// the index lacks; a search for the word alone finds that many passages.
func TestDocFreq(t *testing.T) {
	ix := openIndex(t, faq, Options{})
	ctx := context.Background()
	words := []string{"vaccine", "vaccines", "the", "napoleonically"}
	dfs, n, err := ix.DocFreq(ctx, words)
	if err != nil {
		t.Fatal(err)
	}
	if n != ix.Stats().Passages || n == 0 {
		t.Fatalf("%d passages, the index has %d", n, ix.Stats().Passages)
	}
	terms, err := ix.terms("vaccine", ix.langs)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.gen.Lexical.Search(ctx, backend.LexicalQuery{Terms: terms, N: n})
	if err != nil {
		t.Fatal(err)
	}
	if dfs[0] == 0 || dfs[0] != len(hits) || dfs[1] != dfs[0] || dfs[2] != n || dfs[3] != 0 {
		t.Errorf("document frequencies %v of %q (%d passages; a search for vaccine finds %d)", dfs, words, n, len(hits))
	}
}
