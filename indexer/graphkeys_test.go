package indexer

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend/hnswvec"
)

// TestGraphNodesAreKeys: builds embed passages in key order, so every node of the graph is
// node k for passage key k and the graph keeps no map of its keys (hnsw.Graph.MovedKeys),
// which at 10M passages was 288 MiB: an inline build, a LexicalFirst build that
// checkpoints, one interrupted and resumed, and an update that adds documents.
func TestGraphNodesAreKeys(t *testing.T) {
	ctx := context.Background()
	input := scifactHead(t, 300)
	check := func(what, dir string) {
		t.Helper()
		g := openLive(t, dir)
		defer g.Close()
		graph := g.Vectors.(*hnswvec.Reader).Graph()
		if graph.Live() == 0 || graph.MovedKeys() != 0 {
			t.Errorf("%s: %d of %d vectors keyed by a map, want none", what, graph.MovedKeys(), graph.Live())
		}
	}
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Build(ctx, Options{Dir: ref, Inputs: []InputSpec{{Path: input}}, EmbedInline: true, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW}); err != nil {
		t.Fatal(err)
	}
	check("inline build", ref)

	log := &commitLog{}
	lex := filepath.Join(t.TempDir(), "lex")
	if _, err := Build(ctx, checkpointEveryBatch(lex, input, &countingEncoder{dim: 32}, true, log)); err != nil {
		t.Fatal(err)
	}
	check("LexicalFirst build", lex)

	resumed := filepath.Join(t.TempDir(), "resumed")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	enc := &cancelEncoder{countingEncoder: &countingEncoder{dim: 32}, n: 2, cancel: cancel}
	if _, err := Build(cctx, checkpointEveryBatch(resumed, input, enc, true, log)); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	if _, err := resumeBuild(ctx, checkpointEveryBatch(resumed, input, &countingEncoder{dim: 32}, true, log)); err != nil {
		t.Fatal(err)
	}
	check("resumed build", resumed)

	upd := filepath.Join(t.TempDir(), "upd")
	if _, err := Build(ctx, Options{Dir: upd, Inputs: []InputSpec{{Path: scifactHead(t, 200)}}, EmbedInline: true, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW}); err != nil {
		t.Fatal(err)
	}
	if _, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: upd, Inputs: []InputSpec{{Path: input}}, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW}, CompactRatio: -1}); err != nil {
		t.Fatal(err)
	}
	check("update adding documents", upd)
}
