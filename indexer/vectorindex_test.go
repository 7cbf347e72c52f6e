package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/ivf"
)

// liveIVFHead reads the head of the inverted file of dir's live generation, and returns it
// with the generation's directory.
func liveIVFHead(t *testing.T, dir string) (*ivf.Head, string) {
	t.Helper()
	gen, err := manifest.Current(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(gen, "ivf", ivf.HeadName))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ivf.ParseHead(b)
	if err != nil {
		t.Fatal(err)
	}
	return h, gen
}

// ivfFiles returns the bytes of the list segment and centroids of the live generation of dir,
// which must have an inverted file with one list segment.
func ivfFiles(t *testing.T, dir string) (lists, centroids []byte) {
	t.Helper()
	h, gen := liveIVFHead(t, dir)
	var err error
	if len(h.Lists) != 1 || !h.Trained() {
		t.Fatalf("%s: %d list segments, trained %v; want one, trained", gen, len(h.Lists), h.Trained())
	}
	if lists, err = os.ReadFile(filepath.Join(gen, "ivf", h.Lists[0].Name)); err != nil {
		t.Fatal(err)
	}
	if centroids, err = os.ReadFile(filepath.Join(gen, "ivf", h.Centroids)); err != nil {
		t.Fatal(err)
	}
	return lists, centroids
}

// denseHits runs the dense queries on the live generation of dir (approximate search).
func denseHits(t *testing.T, dir string, queries [][]float32) string {
	t.Helper()
	g := openLive(t, dir)
	defer g.Close()
	var out bytes.Buffer
	for _, q := range queries {
		hits, err := g.Vectors.Search(t.Context(), backend.VectorQuery{Vector: q, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&out, hits)
	}
	return out.String()
}

// A --bm25-first build chooses the inverted file from its size (Options.VectorIndex ""): it
// trains the centroids once its sample is embedded and assigns every later passage as it is
// embedded. Interrupted while it assigns (after checkpoints), resumed, it ends with the lists,
// centroids and search results of a build that was not interrupted, and verifies.
func TestIVFResumeEqualsClean(t *testing.T) {
	input := scifactHead(t, 300)
	ctx := context.Background()
	opts := func(dir string, enc PassageEncoder) Options {
		return Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, Encoder: enc, ivfFrom: 100,
			IVF:   ivf.Options{Sample: 200},
			Build: BuildOptions{BatchSize: 100}, CheckpointEvery: 1 << 30, CheckpointAfter: time.Nanosecond}
	}
	clean := filepath.Join(t.TempDir(), "clean")
	sum, err := Build(ctx, opts(clean, &countingEncoder{dim: 32}))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Dense == nil || sum.Dense.Index != VectorIndexIVF || sum.Dense.IVF == nil || sum.Dense.IVF.Sample != 200 {
		t.Fatalf("a build of %d passages from 100: dense %+v; want the inverted file", sum.Counts.Passages, sum.Dense)
	}

	dir := filepath.Join(t.TempDir(), "idx")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The encoder's fifth call: the centroids were trained after the second batch, and the
	// third and fourth were assigned and checkpointed.
	if _, err := Build(cctx, opts(dir, &cancelEncoder{countingEncoder: &countingEncoder{dim: 32}, n: 5, cancel: cancel})); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	cp, err := manifest.ReadCheckpoint(dir)
	if err != nil || cp == nil || cp.Embedding == nil || cp.VectorIndex != VectorIndexIVF || cp.Embedding.NextKey != 400 {
		t.Fatalf("checkpoint %+v, %v: want the inverted file's, 4 batches of 100 embedded", cp, err)
	}
	hb, err := os.ReadFile(filepath.Join(dir, cp.Generation, "ivf", ivf.HeadName))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := ivf.ParseHead(hb); err != nil || !h.Trained() || len(h.Lists) < 2 {
		t.Fatalf("the checkpoint's inverted file: %+v, %v; want it trained, with the lists of several checkpoints", h, err)
	}
	if _, err := resumeBuild(ctx, func() Options { o := opts(dir, &countingEncoder{dim: 32}); o.VectorIndex = VectorIndexHNSW; return o }()); err == nil {
		t.Fatal("resuming an inverted file's build as a graph: no error")
	}
	if _, err := resumeBuild(ctx, opts(dir, &countingEncoder{dim: 32})); err != nil {
		t.Fatal(err)
	}
	if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	la, ca := ivfFiles(t, clean)
	lb, cb := ivfFiles(t, dir)
	if !bytes.Equal(la, lb) || !bytes.Equal(ca, cb) {
		t.Errorf("the resumed build's lists or centroids differ from the clean build's")
	}
	queries, err := confEncoder.EncodePassages(ctx, []string{"cell protein expression", "vitamin D deficiency", "clinical trial of a vaccine"})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := denseHits(t, clean, queries), denseHits(t, dir, queries); a != b {
		t.Errorf("searches differ:\nclean   %s\nresumed %s", a, b)
	}
}

// Below its size the build keeps the graph, and an update of an inverted file stays one.
func TestVectorIndexChoice(t *testing.T) {
	input := scifactHead(t, 60)
	ctx := context.Background()
	small := filepath.Join(t.TempDir(), "small")
	sum, err := Build(ctx, Options{Dir: small, Inputs: []InputSpec{{Path: input}}, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW, ivfFrom: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Dense == nil || sum.Dense.IndexKind() != VectorIndexHNSW {
		t.Errorf("a build under the size: dense %+v, want the graph", sum.Dense)
	}
	big := filepath.Join(t.TempDir(), "big")
	o := Options{Dir: big, Inputs: []InputSpec{{Path: input}}, Encoder: &countingEncoder{dim: 32}, ivfFrom: 10}
	if sum, err = Build(ctx, o); err != nil || sum.Dense.IndexKind() != VectorIndexIVF {
		t.Fatalf("a build over the size: %+v, %v; want the inverted file", sum.Dense, err)
	}
	up := UpdateOptions{Options: o, CompactRatio: -1}
	up.VectorIndex = VectorIndexHNSW
	if _, err := updateIndex(ctx, up); err == nil {
		t.Error("an update naming the graph for an inverted file: no error")
	}
}
