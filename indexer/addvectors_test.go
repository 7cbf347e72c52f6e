package indexer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// gateEncoder holds its first call until released, so a test can look at the index while a
// build is embedding.
type gateEncoder struct {
	*countingEncoder
	started, release chan struct{}
	once             sync.Once
}

func newGateEncoder() *gateEncoder {
	return &gateEncoder{countingEncoder: &countingEncoder{dim: 32}, started: make(chan struct{}), release: make(chan struct{})}
}

func (e *gateEncoder) EncodePassages(ctx context.Context, texts []string) ([][]float32, error) {
	e.once.Do(func() {
		close(e.started)
		select {
		case <-e.release:
		case <-ctx.Done():
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.countingEncoder.EncodePassages(ctx, texts)
}

// A LexicalFirst build, on both local lexical engines: while it embeds, the live generation
// is its BM25 index, with the passages and the BM25 answers of a build that embeds inline;
// at the end the next generation holds the same vectors, key for key, and verifies. An
// embedding interrupted leaves the BM25 generation live, and Resume embeds from it (every
// passage once, the BM25 generation kept as it was), ending with the same vectors.
func TestLexicalFirstBuild(t *testing.T) {
	input := scifactHead(t, 300)
	for _, lexical := range []string{"postings", "bleve"} {
		t.Run(lexical, func(t *testing.T) {
			ctx := context.Background()
			opts := func(dir string, enc PassageEncoder, first bool) Options {
				return Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, Encoder: enc, HNSW: fastHNSW,
					Build: BuildOptions{Lexical: lexical, BatchSize: 200}, EmbedInline: !first}
			}
			refDir := filepath.Join(t.TempDir(), "ref")
			ref, err := Build(ctx, opts(refDir, &countingEncoder{dim: 32}, false))
			if err != nil {
				t.Fatal(err)
			}
			refGen := openLive(t, refDir)
			refHits := lexHits(t, refGen)

			dir := filepath.Join(t.TempDir(), "first")
			gate := newGateEncoder()
			type result struct {
				sum *Summary
				err error
			}
			done := make(chan result, 1)
			go func() {
				s, err := Build(ctx, opts(dir, gate, true))
				done <- result{s, err}
			}()
			select {
			case <-gate.started:
			case r := <-done:
				t.Fatalf("build ended before embedding: %+v %v", r.sum, r.err)
			}
			live := openLive(t, dir)
			if live.Manifest.Dense != nil || live.Manifest.Counts.Passages != ref.Counts.Passages || live.Manifest.Counts.Documents != ref.Counts.Documents || !reflect.DeepEqual(lexHits(t, live), refHits) {
				t.Errorf("while embedding, the live generation %d: dense %v, counts %+v (want %+v), hits differ: %v",
					live.Manifest.Generation, live.Manifest.Dense, live.Manifest.Counts, ref.Counts, !reflect.DeepEqual(lexHits(t, live), refHits))
			}
			lexGen := live.Manifest.Generation
			live.Close()
			close(gate.release)
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.sum.LexicalGeneration != lexGen || r.sum.Generation != lexGen+1 || r.sum.Dense == nil || r.sum.Dense.Vectors != ref.Counts.Passages {
				t.Errorf("summary: lexical generation %d (want %d), generation %d, dense %+v", r.sum.LexicalGeneration, lexGen, r.sum.Generation, r.sum.Dense)
			}
			sameVectors(t, refGen, dir)
			if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
				t.Errorf("verify: %v %+v", err, rep)
			}

			// Interrupted while embedding, then resumed.
			dir2 := filepath.Join(t.TempDir(), "interrupted")
			gate2 := newGateEncoder()
			cctx, cancel := context.WithCancel(ctx)
			go func() { <-gate2.started; cancel() }()
			if _, err := Build(cctx, opts(dir2, gate2, true)); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted build: %v", err)
			}
			live2 := openLive(t, dir2)
			kept := live2.Manifest
			live2.Close()
			if kept.Dense != nil || kept.Counts.Passages != ref.Counts.Passages {
				t.Fatalf("after the interruption the live generation is %+v", kept)
			}
			enc := &countingEncoder{dim: 32}
			sum, err := resumeBuild(ctx, opts(dir2, enc, true))
			if err != nil {
				t.Fatal(err)
			}
			if sum.LexicalGeneration != kept.Generation || sum.Generation != kept.Generation+1 || sum.NoCheckpoint ||
				enc.texts.Load() != int64(ref.Counts.Passages) {
				t.Errorf("resume: lexical generation %d (want %d), generation %d, no checkpoint %v, %d passages embedded (want %d)",
					sum.LexicalGeneration, kept.Generation, sum.Generation, sum.NoCheckpoint, enc.texts.Load(), ref.Counts.Passages)
			}
			sameVectors(t, refGen, dir2)
			refGen.Close()
		})
	}
}

// lexHits are the BM25 answers of a few queries: keys and scores.
func lexHits(t *testing.T, g *Generation) [][]backend.Hit {
	t.Helper()
	var out [][]backend.Hit
	for _, terms := range [][]string{{"vitamin"}, {"cell", "cancer"}, {"protein", "express"}} {
		hits, err := g.Lexical.Search(context.Background(), backend.LexicalQuery{Terms: terms, N: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Fatalf("no hits for %v", terms)
		}
		out = append(out, hits)
	}
	return out
}

// sameVectors checks that the live generation of dir holds ref's vectors, key for key.
func sameVectors(t *testing.T, ref *Generation, dir string) {
	t.Helper()
	g := openLive(t, dir)
	defer g.Close()
	if g.Vectors == nil || g.Vectors.Live() != ref.Vectors.Live() {
		t.Fatalf("vectors %v, want %d", g.Vectors, ref.Vectors.Live())
	}
	for k := uint32(0); int(k) < ref.Vectors.Len(); k++ {
		a, _, err := ref.Vectors.Vector(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		b, ok, err := g.Vectors.Vector(t.Context(), k)
		if err != nil || !ok || !reflect.DeepEqual(a, b) {
			t.Fatalf("key %d: vector differs from an inline build's", k)
		}
	}
}

// cancelEncoder cancels its build on its nth call, as Ctrl-C would in the middle of an
// embedding.
type cancelEncoder struct {
	*countingEncoder
	n, calls int
	cancel   func()
}

func (e *cancelEncoder) EncodePassages(ctx context.Context, texts []string) ([][]float32, error) {
	if e.calls++; e.calls == e.n {
		e.cancel()
		return nil, context.Canceled
	}
	return e.countingEncoder.EncodePassages(ctx, texts)
}

// The embedding half checkpoints every CheckpointAfter: interrupted after some checkpoints,
// the BM25 generation stays live, CHECKPOINT says up to which key the vectors go, and Resume
// embeds only the passages after it, ending with the vectors of an inline build.
func TestLexicalFirstEmbeddingCheckpoints(t *testing.T) {
	input := scifactHead(t, 300)
	ctx := context.Background()
	opts := func(dir string, enc PassageEncoder) Options {
		return Options{Dir: dir, Inputs: []InputSpec{{Path: input}}, Encoder: enc, HNSW: fastHNSW,
			Build: BuildOptions{BatchSize: 100}, CheckpointEvery: 1 << 30, CheckpointAfter: time.Nanosecond}
	}
	refDir := filepath.Join(t.TempDir(), "ref")
	ref, err := Build(ctx, Options{Dir: refDir, Inputs: []InputSpec{{Path: input}}, EmbedInline: true, Encoder: &countingEncoder{dim: 32}, HNSW: fastHNSW})
	if err != nil {
		t.Fatal(err)
	}
	refGen := openLive(t, refDir)
	defer refGen.Close()

	dir := filepath.Join(t.TempDir(), "idx")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := Build(cctx, opts(dir, &cancelEncoder{countingEncoder: &countingEncoder{dim: 32}, n: 4, cancel: cancel})); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	cp, err := manifest.ReadCheckpoint(dir)
	if err != nil || cp == nil || cp.Embedding == nil {
		t.Fatalf("checkpoint %+v, %v: want one of the embedding", cp, err)
	}
	if live := liveGen(dir); live != cp.Embedding.LexicalGeneration || cp.Embedding.NextKey != 300 {
		t.Errorf("live generation %d, checkpoint %+v: want the BM25 generation live and 3 batches of 100 embedded", live, cp.Embedding)
	}
	enc := &countingEncoder{dim: 32}
	sum, err := resumeBuild(ctx, opts(dir, enc))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(ref.Counts.Passages) - 300; enc.texts.Load() != want || sum.Dense == nil || sum.Dense.Vectors != ref.Counts.Passages {
		t.Errorf("resume embedded %d passages (want %d), dense %+v", enc.texts.Load(), want, sum.Dense)
	}
	if cp, _ := manifest.ReadCheckpoint(dir); cp != nil {
		t.Errorf("checkpoint left after the build: %+v", cp)
	}
	sameVectors(t, refGen, dir)
	if rep, err := verifyIndex(ctx, dir); err != nil || !rep.OK() {
		t.Errorf("verify: %v %+v", err, rep)
	}
}

// A lexical-first build on Qdrant, the store's collections copied from the BM25 generation
// into the next: while it embeds, the live generation is its BM25 index (no vectors, every
// passage); at the end the next generation has a vector for every passage, verifies, and
// answers dense queries as an inline build on the same cluster does. An embedding
// interrupted leaves the BM25 generation live, and Resume embeds from it, every passage once.
func TestLexicalFirstBuildOnQdrant(t *testing.T) {
	var loc func(*testing.T, string) string
	for _, b := range confBackends() {
		if b.remote {
			loc = b.start(t)
		}
	}
	ctx := context.Background()
	fx := newConfFixture(t)
	in := fx.write(t, "lexfirst.jsonl", fx.base())
	opts := func(l string, enc PassageEncoder, inline bool) Options {
		return Options{Dir: l, Inputs: []InputSpec{in}, Encoder: enc, HNSW: fastHNSW, Build: BuildOptions{BatchSize: 20}, EmbedInline: inline}
	}
	ref := loc(t, "inline")
	refSum, err := Build(ctx, opts(ref, confEncoder, true))
	if err != nil {
		t.Fatal(err)
	}

	first := loc(t, "first")
	gate := newGateEncoder()
	type result struct {
		sum *Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Build(ctx, opts(first, gate, false))
		done <- result{s, err}
	}()
	select {
	case <-gate.started:
	case r := <-done:
		t.Fatalf("build ended before embedding: %+v %v", r.sum, r.err)
	}
	live, err := liveManifest(ctx, first)
	if err != nil || live.Dense != nil || live.Counts.Passages != refSum.Counts.Passages {
		t.Fatalf("while embedding, the live generation: %+v, %v; want BM25 only, %d passages", live, err, refSum.Counts.Passages)
	}
	close(gate.release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.LexicalGeneration != live.Generation || r.sum.Generation <= live.Generation || r.sum.Dense == nil || r.sum.Dense.Vectors != refSum.Counts.Passages {
		t.Errorf("summary: lexical generation %d (want %d), generation %d, dense %+v", r.sum.LexicalGeneration, live.Generation, r.sum.Generation, r.sum.Dense)
	}
	if rep, err := verifyIndex(ctx, first); err != nil || !rep.OK() {
		t.Errorf("verify: %v %+v", err, rep)
	}
	queries := []string{docQuery(modeDense, fx.base()[3]), docQuery(modeDense, fx.base()[40]), "cell"}
	for _, q := range queries {
		got := confSearch(t, first, modeDense, q, 10, true, backend.Filter{})
		want := confSearch(t, ref, modeDense, q, 10, true, backend.Filter{})
		if len(want) == 0 || fmt.Sprint(ids(got)) != fmt.Sprint(ids(want)) {
			t.Errorf("dense %q: lexical first %v, inline %v", q, ids(got), ids(want))
		}
	}

	// Interrupted while embedding, then resumed.
	second := loc(t, "interrupted")
	gate2 := newGateEncoder()
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-gate2.started; cancel() }()
	if _, err := Build(cctx, opts(second, gate2, false)); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	kept, err := liveManifest(ctx, second)
	if err != nil || kept.Dense != nil || kept.Counts.Passages != refSum.Counts.Passages {
		t.Fatalf("after the interruption the live generation is %+v, %v", kept, err)
	}
	enc := &countingEncoder{dim: confEncoder.dim}
	sum, err := resumeBuild(ctx, opts(second, enc, false))
	if err != nil {
		t.Fatal(err)
	}
	if sum.LexicalGeneration != kept.Generation || sum.Generation <= kept.Generation || sum.NoCheckpoint || enc.texts.Load() != int64(refSum.Counts.Passages) {
		t.Errorf("resume: lexical generation %d (want %d), generation %d, no checkpoint %v, %d passages embedded (want %d)",
			sum.LexicalGeneration, kept.Generation, sum.Generation, sum.NoCheckpoint, enc.texts.Load(), refSum.Counts.Passages)
	}
	if rep, err := verifyIndex(ctx, second); err != nil || !rep.OK() {
		t.Errorf("verify after resume: %v %+v", err, rep)
	}
}

// ids are the passage ids of hits, in order.
func ids(hits []confHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}
