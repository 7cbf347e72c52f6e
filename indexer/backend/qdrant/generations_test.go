package qdrant

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/modelid"
)

// TestGenerations runs the generation records on a real one-peer cluster: numbering, the
// manifest and document table written and read back, a damaged table and a misplaced
// manifest refused, the checkpoint of a generation above the live one found, and every
// generation but those kept dropped.
func TestGenerations(t *testing.T) {
	ctx := context.Background()
	c := qdranttest.Start(t, 1)
	e := newEngine(t, c, "gens", Options{Dim: testDim})
	if n, err := e.NextGeneration(ctx); n != 1 || err != nil {
		t.Fatalf("NextGeneration of an empty index: %d, %v", n, err)
	}
	if n, err := e.LiveGeneration(ctx); n != 0 || err != nil {
		t.Fatalf("LiveGeneration of an empty index: %d, %v", n, err)
	}
	ps := sciFact(t)[:20]
	docs := []byte("the document table's bytes")
	write := func(gen int) *manifest.Manifest {
		t.Helper()
		writeGen(t, e, backend.Gen{Name: manifest.GenerationName(gen)}, ps, randomVectors(len(ps), uint64(gen)))
		man := &manifest.Manifest{FormatVersion: manifest.FormatVersion, Generation: gen, Counts: manifest.Counts{Documents: 5, Passages: len(ps)},
			Dense: &manifest.DenseInfo{Model: modelid.Identity{Name: "m", Dim: testDim}}, Tombstones: 3}
		if err := e.WriteGeneration(ctx, gen, docs, man); err != nil {
			t.Fatal(err)
		}
		return man
	}
	man1 := write(1)
	if man1.Tombstones != 0 || man1.Dense.Vectors != len(ps) || man1.Files[doctable.FileName] != sumOf(docs) || man1.Checksum == "" {
		t.Errorf("WriteGeneration left the manifest %+v", man1)
	}
	coll1 := e.Collection(manifest.GenerationName(1))
	if got, err := e.ReadManifest(ctx, coll1); err != nil || !reflect.DeepEqual(got, man1) {
		t.Fatalf("ReadManifest: %+v, %v; wrote %+v", got, err, man1)
	}
	if got, err := e.ReadDocTable(ctx, coll1, man1); err != nil || string(got) != string(docs) {
		t.Fatalf("ReadDocTable: %q, %v", got, err)
	}
	if err := e.Promote(ctx, backend.Gen{Name: manifest.GenerationName(1)}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.LiveGeneration(ctx); n != 1 || err != nil {
		t.Fatalf("LiveGeneration: %d, %v", n, err)
	}

	// Generation 2 is a checkpoint: committed, not live, with its checkpoint record.
	man2 := write(2)
	if cp, err := e.PendingCheckpoint(ctx, 1); cp != nil || err != nil {
		t.Fatalf("PendingCheckpoint before the checkpoint record: %+v, %v", cp, err)
	}
	cp := &manifest.Checkpoint{Generation: manifest.GenerationName(2), Position: manifest.Position{Input: 0, Docs: 5}}
	if err := e.WriteCheckpoint(ctx, 2, cp); err != nil {
		t.Fatal(err)
	}
	if got, err := e.PendingCheckpoint(ctx, 1); err != nil || !reflect.DeepEqual(got, cp) {
		t.Fatalf("PendingCheckpoint: %+v, %v; wrote %+v", got, err, cp)
	}
	if got, err := e.PendingCheckpoint(ctx, 2); got != nil || err != nil {
		t.Errorf("PendingCheckpoint at or below the live generation: %+v, %v", got, err)
	}
	if n, err := e.NextGeneration(ctx); n != 3 || err != nil {
		t.Errorf("NextGeneration: %d, %v", n, err)
	}

	// Damage: a document table that is not the one the manifest sums, a manifest record in
	// another generation's collection, a checkpoint naming another generation.
	coll2 := e.Collection(manifest.GenerationName(2))
	g2 := backend.Gen{Name: manifest.GenerationName(2)}
	if err := e.WriteRecord(ctx, g2, RecordDocTable, []byte("edited")); err != nil {
		t.Fatal(err)
	}
	var de *backend.DamagedError
	if _, err := e.ReadDocTable(ctx, coll2, man2); !errors.As(err, &de) || !strings.Contains(err.Error(), coll2) {
		t.Errorf("edited document table: %v", err)
	}
	b, _ := man1.Marshal()
	if err := e.WriteRecord(ctx, g2, RecordManifest, b); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ReadManifest(ctx, coll2); !errors.As(err, &de) || !strings.Contains(err.Error(), "describes generation g-000001") {
		t.Errorf("misplaced manifest: %v", err)
	}
	other := &manifest.Checkpoint{Generation: manifest.GenerationName(1)}
	if err := e.WriteCheckpoint(ctx, 2, other); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PendingCheckpoint(ctx, 1); !errors.As(err, &de) || !strings.Contains(err.Error(), "not its own") {
		t.Errorf("checkpoint naming another generation: %v", err)
	}

	if err := e.DropGenerations(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatal(err)
	}
	if names, err := e.Generations(ctx); err != nil || !reflect.DeepEqual(names, []string{"g-000001"}) {
		t.Errorf("after DropGenerations: %v, %v", names, err)
	}
	// Drop is idempotent: Qdrant answers false, not NotFound, for a collection it does not
	// hold, and a dropped generation's drop retried after a failover must not fail on it.
	for _, gen := range []string{manifest.GenerationName(2), manifest.GenerationName(9)} {
		if err := e.Drop(ctx, backend.Gen{Name: gen}); err != nil {
			t.Errorf("Drop of %s, which the cluster does not hold: %v", gen, err)
		}
	}
}
