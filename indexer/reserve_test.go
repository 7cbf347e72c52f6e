package indexer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEmbeddingReservesItsVectors: the embedding half of a LexicalFirst build knows how many
// passages it embeds and asks its first graph writer, once, to allocate for all of them,
// though it checkpoints (the graph stays in memory from one writer to the next); resumed, it
// reserves what is left after the checkpoint. The vectors are those of a build without it.
// (That the graph then never reallocates is internal/hnsw's TestReserveAllocatesOnce.)
func TestEmbeddingReservesItsVectors(t *testing.T) {
	input := scifactHead(t, 300)
	ctx := context.Background()
	refGen := referenceBuild(t, input)
	defer refGen.Close()
	passages := refGen.Manifest.Counts.Passages
	log := &commitLog{}
	opts := func(dir string, enc PassageEncoder) Options {
		return checkpointEveryBatch(dir, input, enc, true, log)
	}
	reserves := func(calls []string) []string {
		var r []string
		for _, c := range calls {
			if strings.HasPrefix(c, "reserve ") {
				r = append(r, c)
			}
		}
		return r
	}

	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, opts(dir, &countingEncoder{dim: 32})); err != nil {
		t.Fatal(err)
	}
	calls := log.take()
	if want := []string{"begin", fmt.Sprintf("reserve %d", passages)}; len(calls) < 2 || !slices.Equal(calls[:2], want) || len(reserves(calls)) != 1 {
		t.Errorf("LexicalFirst build: %v, want %v first and no other reserve", calls, want)
	}
	sameVectors(t, refGen, dir)

	dir = filepath.Join(t.TempDir(), "resumed")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := Build(cctx, opts(dir, &cancelEncoder{countingEncoder: &countingEncoder{dim: 32}, n: 2, cancel: cancel})); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	log.take()
	enc := &countingEncoder{dim: 32}
	if _, err := resumeBuild(ctx, opts(dir, enc)); err != nil {
		t.Fatal(err)
	}
	left := int(enc.texts.Load())
	if got, want := reserves(log.take()), []string{fmt.Sprintf("reserve %d", left)}; left == 0 || left == passages || !slices.Equal(got, want) {
		t.Errorf("resumed after a checkpoint, %d of %d passages left to embed: reserved %v, want %v", left, passages, got, want)
	}
	sameVectors(t, refGen, dir)
}
