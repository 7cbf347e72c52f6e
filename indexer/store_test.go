package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/indexer/store"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Open serves each kind of location with its own store: the store names the location it
// was opened for, so a wrong case of the switch (a cluster served as a directory, or the
// reverse) shows as a different location.
func TestOpenLocation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	for _, s := range []string{
		dir,
		"qdrant://127.0.0.1:6334/docs",
		"qdrant://a:6334,b:6334/docs?shards=2&replication=2&rest=a:6333",
	} {
		ix, err := openIndex(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if got := ix.st.String(); got != s {
			t.Errorf("Open(%q) serves %q", s, got)
		}
		if got := ix.Location().String(); got != s {
			t.Errorf("Open(%q).Location() = %q", s, got)
		}
		ix.Close()
	}
	if _, err := Open(context.Background(), Location{}); err == nil {
		t.Error("Open of no location: no error")
	}
}

// The conformance suite of the store seam (indexer/store): one table of behaviours run over
// every store.Store, in the manner of litestream's replica-client suite, so that what the
// driver relies on (numbering, commit, checkpoints, drop, records, engines) is written once
// and both stores are held to it. The generations are written by the driver (Index.Build);
// what the suite asserts it asks the store itself. The Qdrant column runs a real loopback
// cluster (TestConformance's rules: skipped without its binary, failed when
// KAIROS_QDRANT_BIN names one that is absent).

// storeBehaviour is one row of the suite: it runs on a new, empty location loc of a store,
// opened as ix; foreign is a lexical engine the store does not have.
type storeBehaviour struct {
	name string
	run  func(t *testing.T, ix *Index, fx *confFixture, foreign string)
}

var storeBehaviours = []storeBehaviour{
	{"empty", storeEmpty},
	{"commit", storeCommit},
	{"begin and discard", storeBeginDiscard},
	{"checkpoint", storeCheckpoint},
	{"drop", storeDrop},
	{"document table", storeDocTable},
	{"engines", storeEngines},
}

func TestStoreConformance(t *testing.T) {
	fx := newConfFixture(t)
	for _, b := range confBackends() {
		if b.name != "postings" && b.name != "qdrant" { // one column per store
			continue
		}
		t.Run(map[bool]string{false: "local", true: "qdrant"}[b.remote], func(t *testing.T) {
			loc := b.start(t)
			foreign := LexicalQdrant
			if b.remote {
				foreign = LexicalPostings
			}
			for _, sb := range storeBehaviours {
				t.Run(sb.name, func(t *testing.T) {
					ix, err := openIndex(t.Context(), loc(t, strings.ReplaceAll(sb.name, " ", "")))
					if err != nil {
						t.Fatal(err)
					}
					defer ix.Close()
					sb.run(t, ix, fx, foreign)
				})
			}
		})
	}
}

// storeBuild builds recs into ix with small batches and a checkpoint every 20 passages
// (counted only); hook, when set, is the fault hook.
func storeBuild(t *testing.T, ix *Index, fx *confFixture, recs []map[string]any, hook func(string) error) (*Summary, error) {
	t.Helper()
	return ix.Build(t.Context(), Options{Inputs: []InputSpec{fx.write(t, "store.jsonl", recs)},
		Build: BuildOptions{BatchSize: 10}, CheckpointEvery: 20, CheckpointAfter: -1, faultAt: hook})
}

// hasGeneration reports whether the store still holds generation n (its manifest reads).
func hasGeneration(t *testing.T, st store.Store, n int) bool {
	t.Helper()
	_, err := st.Manifest(t.Context(), n)
	return err == nil
}

// empty: a location without an index has no live generation, no manifest (ErrNoIndex), no
// checkpoint and nothing to verify or open; asking creates nothing.
func storeEmpty(t *testing.T, ix *Index, _ *confFixture, _ string) {
	ctx := t.Context()
	st := ix.st
	if n, err := st.Live(ctx); n != 0 || err != nil {
		t.Errorf("Live = %d, %v; want 0, nil", n, err)
	}
	if _, err := st.Manifest(ctx, 0); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Manifest: %v; want ErrNoIndex", err)
	}
	if cp, err := st.Checkpoint(ctx); cp != nil || err != nil {
		t.Errorf("Checkpoint = %+v, %v; want none", cp, err)
	}
	if err := st.DropCheckpoint(ctx); err != nil {
		t.Errorf("DropCheckpoint with none: %v", err)
	}
	if _, err := st.Verify(ctx, 0); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Verify: %v; want ErrNoIndex", err)
	}
	if _, err := st.Open(ctx, 0, ReadOptions{}); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Open: %v; want ErrNoIndex", err)
	}
	if dir := ix.loc.Dir; dir != "" {
		if m, _ := filepath.Glob(dir); len(m) != 0 {
			t.Errorf("asking an empty store created %v", m)
		}
	}
}

// commit: a committed generation is live, its manifest describes it (live and by number),
// it opens with the passages the manifest counts and verifies; a second commit replaces it
// as the live one.
func storeCommit(t *testing.T, ix *Index, fx *confFixture, _ string) {
	ctx := t.Context()
	st := ix.st
	sum, err := storeBuild(t, ix, fx, fx.base(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.Live(ctx); n != sum.Generation || err != nil {
		t.Fatalf("Live = %d, %v; want %d", n, err, sum.Generation)
	}
	for _, n := range []int{0, sum.Generation} {
		man, err := st.Manifest(ctx, n)
		if err != nil {
			t.Fatalf("Manifest(%d): %v", n, err)
		}
		if man.Generation != sum.Generation || man.Counts.Documents != sum.Counts.Documents || man.Counts.Passages != sum.Counts.Passages {
			t.Fatalf("Manifest(%d): generation %d, counts %+v; want %d, %+v", n, man.Generation, man.Counts, sum.Generation, sum.Counts)
		}
	}
	p, err := st.Open(ctx, 0, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Manifest.Generation != sum.Generation || p.Passages.Live() != sum.Counts.Passages {
		t.Errorf("Open: generation %d, %d live passages; want %d, %d", p.Manifest.Generation, p.Passages.Live(), sum.Generation, sum.Counts.Passages)
	}
	if n, err := p.Lexical.Docs(ctx); n != sum.Counts.Passages || err != nil {
		t.Errorf("Open: the lexical part holds %d passages (%v), want %d", n, err, sum.Counts.Passages)
	}
	p.Lexical.Close()
	p.Release()
	rep, err := st.Verify(ctx, 0)
	if err != nil || !rep.OK() || rep.Passages != sum.Counts.Passages {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
	again, err := storeBuild(t, ix, fx, fx.extra(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Live(ctx); n != again.Generation || again.Generation <= sum.Generation {
		t.Errorf("after a second build: live %d, built %d after %d", n, again.Generation, sum.Generation)
	}
	if man, err := st.Manifest(ctx, 0); err != nil || man.Counts.Documents != len(fx.extra()) {
		t.Errorf("after a second build: live manifest %+v, %v", man, err)
	}
}

// begin and discard: Begin numbers past every generation the store holds, and a generation
// begun then discarded leaves nothing: not live, not readable, and its number is free again.
func storeBeginDiscard(t *testing.T, ix *Index, fx *confFixture, _ string) {
	ctx := t.Context()
	st := ix.st
	sum, err := storeBuild(t, ix, fx, fx.base()[:10], nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := st.Engines(ctx, store.EngineSpec{Base: nil, Lexical: ""})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	w, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.Gen <= sum.Generation || w.Dir == "" {
		t.Fatalf("Begin = %+v after generation %d", w, sum.Generation)
	}
	// What a writer makes of it before it fails: the lexical part's beginning.
	lw, err := eng.Lexical.Begin(ctx, backendGen(w), nil, backend.LexicalBegin{Analyzer: manifest.Analyzer})
	if err != nil {
		t.Fatal(err)
	}
	lw.Abort()
	if err := st.Discard(ctx, w); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Live(ctx); n != sum.Generation {
		t.Errorf("after Discard: live %d, want %d", n, sum.Generation)
	}
	if hasGeneration(t, st, w.Gen) {
		t.Errorf("the discarded generation %d reads", w.Gen)
	}
	w2, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w2.Gen != w.Gen {
		t.Errorf("Begin after Discard = %d, want %d again", w2.Gen, w.Gen)
	}
	if err := st.Discard(ctx, w2); err != nil {
		t.Fatal(err)
	}
}

// checkpoint: a build stopped after a checkpoint leaves the live generation live and the
// checkpoint's generation named by the checkpoint record, readable and verified; Drop keeps
// it; DropCheckpoint forgets it and the next Drop removes it.
func storeCheckpoint(t *testing.T, ix *Index, fx *confFixture, _ string) {
	ctx := t.Context()
	st := ix.st
	first, err := storeBuild(t, ix, fx, fx.base()[:10], nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stopped after a checkpoint")
	checkpointed := false
	_, err = storeBuild(t, ix, fx, fx.base(), func(p string) error {
		switch {
		case p == "checkpoint-recorded":
			checkpointed = true
		case p == "batch-applied" && checkpointed:
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("build: %v, want it stopped after a checkpoint", err)
	}
	if n, _ := st.Live(ctx); n != first.Generation {
		t.Fatalf("live %d after the stopped build, want %d", n, first.Generation)
	}
	cp, err := st.Checkpoint(ctx)
	if err != nil || cp == nil {
		t.Fatalf("Checkpoint = %+v, %v; want the stopped build's", cp, err)
	}
	n, ok := manifest.ParseGeneration(cp.Generation)
	if !ok || n <= first.Generation || cp.Position.Docs == 0 {
		t.Fatalf("checkpoint %+v after generation %d", cp, first.Generation)
	}
	if man, err := st.Manifest(ctx, n); err != nil || man.Generation != n || man.Counts.Passages == 0 {
		t.Fatalf("the checkpoint's manifest: %+v, %v", man, err)
	}
	if rep, err := st.Verify(ctx, n); err != nil || !rep.OK() {
		t.Errorf("Verify(checkpoint) = %+v, %v", rep, err)
	}
	if err := st.Drop(ctx, first.Generation); err != nil {
		t.Fatal(err)
	}
	if !hasGeneration(t, st, n) || !hasGeneration(t, st, first.Generation) {
		t.Fatalf("Drop removed the checkpoint %d or the live generation %d", n, first.Generation)
	}
	if err := st.DropCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if cp, err := st.Checkpoint(ctx); cp != nil || err != nil {
		t.Errorf("Checkpoint after DropCheckpoint = %+v, %v", cp, err)
	}
	if err := st.Drop(ctx, first.Generation); err != nil {
		t.Fatal(err)
	}
	if hasGeneration(t, st, n) {
		t.Errorf("the forgotten checkpoint %d is still there after Drop", n)
	}
	if rep, err := st.Verify(ctx, 0); err != nil || !rep.OK() {
		t.Errorf("Verify after it all: %+v, %v", rep, err)
	}
}

// drop: Drop removes every generation but those it is told to keep.
func storeDrop(t *testing.T, ix *Index, fx *confFixture, _ string) {
	ctx := t.Context()
	st := ix.st
	var gens []int
	for i := range 3 {
		sum, err := storeBuild(t, ix, fx, fx.base()[10*i:10*i+10], nil)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, sum.Generation)
	}
	// A build keeps the generation live before it (readers may not have reloaded yet).
	if !hasGeneration(t, st, gens[1]) || hasGeneration(t, st, gens[0]) {
		t.Fatalf("after three builds: generation %d kept %v, %d kept %v", gens[1], hasGeneration(t, st, gens[1]), gens[0], hasGeneration(t, st, gens[0]))
	}
	if err := st.Drop(ctx, gens[2]); err != nil {
		t.Fatal(err)
	}
	if hasGeneration(t, st, gens[1]) || !hasGeneration(t, st, gens[2]) {
		t.Errorf("Drop(%d): generation %d kept %v, %d kept %v", gens[2], gens[1], hasGeneration(t, st, gens[1]), gens[2], hasGeneration(t, st, gens[2]))
	}
	if n, _ := st.Live(ctx); n != gens[2] {
		t.Errorf("live %d, want %d", n, gens[2])
	}
}

// document table: the table a generation records lists its documents; one whose sum is not
// the manifest's is refused as damage.
func storeDocTable(t *testing.T, ix *Index, fx *confFixture, _ string) {
	ctx := t.Context()
	st := ix.st
	recs := fx.base()[:15]
	if _, err := storeBuild(t, ix, fx, recs, nil); err != nil {
		t.Fatal(err)
	}
	man, err := st.Manifest(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := st.DocTable(ctx, man)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := doctable.Parse(b)
	if err != nil || len(docs) != len(recs) {
		t.Fatalf("document table: %d documents, %v; want %d", len(docs), err, len(recs))
	}
	for _, r := range recs {
		if e := docs[recID(r)]; e == nil || len(e.Keys) == 0 {
			t.Errorf("document %s: entry %+v", recID(r), e)
		}
	}
	wrong := *man
	wrong.Files = map[string]FileSum{doctable.FileName: {Size: int64(len(b)), SHA256: strings.Repeat("0", 64)}}
	if _, err := st.DocTable(ctx, &wrong); !errors.Is(err, ErrDamaged) {
		t.Errorf("a table against another sum: %v, want damage", err)
	}
}

// engines: a new index gets the store's engines and the name its manifest records; a lexical
// engine the store does not have and binary codes of a graph it may not keep are refused as
// the flags that ask for them, and an open asking for binary rescoring of an index without
// binary codes is refused.
func storeEngines(t *testing.T, ix *Index, fx *confFixture, foreign string) {
	ctx := t.Context()
	st := ix.st
	eng, err := st.Engines(ctx, store.EngineSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if eng.Passages == nil || eng.Lexical == nil || eng.Vectors == nil || eng.LexicalName == "" {
		t.Errorf("Engines of a new index: %+v", eng)
	}
	eng.Close()
	if _, err := st.Engines(ctx, store.EngineSpec{Lexical: foreign}); err == nil || !strings.Contains(err.Error(), foreign) {
		t.Errorf("Engines with lexical engine %q: %v", foreign, err)
	}
	if _, err := storeBuild(t, ix, fx, fx.base()[:5], nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Open(ctx, 0, ReadOptions{BinaryRescore: hnsw.RescoreFloat}); err == nil || !strings.Contains(err.Error(), "--binary-rescore") {
		t.Errorf("Open with binary rescoring of an index without binary codes: %v", err)
	}
	if ix.loc.Qdrant != nil {
		bin := fastHNSW
		bin.Codes = hnsw.CodesBinary
		if _, err := st.Engines(ctx, store.EngineSpec{Dim: 8, HNSW: bin}); err == nil || !strings.Contains(err.Error(), "--vectors binary") {
			t.Errorf("Engines with binary codes on Qdrant: %v", err)
		}
	}
	if m, err := st.Manifest(ctx, 0); err != nil || m.Options.Lexical == "" || m.Options.Lexical == foreign {
		t.Errorf("manifest of a build naming no engine: %+v, %v", m, err)
	} else if fmt.Sprint(m.Options.Lexical) != eng.LexicalName {
		t.Errorf("manifest records lexical %q, Engines named %q", m.Options.Lexical, eng.LexicalName)
	}
}

// backendGen is what an engine is handed of the generation w is writing.
func backendGen(w store.Writing) backend.Gen {
	return backend.Gen{Name: manifest.GenerationName(w.Gen), Dir: w.Dir}
}
