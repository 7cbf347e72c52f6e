package indexer

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// TestBinaryVectors builds a dense index with binary codes (--vectors binary) on the real
// engines and checks that the manifest records them, that the generation opens mapped on them
// and finds each passage from its own vector, that an update keeps them and one asking for
// int8 is refused, and that a manifest disagreeing with the graph file is refused at open.
func TestBinaryVectors(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and updates SciFact with binary codes (TestConformance builds graphs under -short)")
	}
	older, newer, _, _, _ := scifactRevisions(t)
	ctx := context.Background()
	dir := t.TempDir()
	enc := &countingEncoder{dim: 64}
	bin := fastHNSW
	bin.Codes = hnsw.CodesBinary
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: older}}, EmbedInline: true, Encoder: enc, HNSW: bin}); err != nil {
		t.Fatal(err)
	}
	gen, _ := manifest.Current(dir)
	if m, _ := manifest.Read(gen); m.Dense == nil || m.Dense.HNSW.Codes != hnsw.CodesBinary {
		t.Fatalf("manifest dense part %+v, want codes binary", m.Dense)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	gr := graphOf(g)
	if !gr.Mapped() || gr.Options().Codes != hnsw.CodesBinary {
		t.Fatalf("opened mapped %v with codes %q", gr.Mapped(), gr.Options().Codes)
	}
	found, tried := 0, 0
	for key := uint32(0); key < uint32(gr.Len()); key += 37 {
		v, ok := gr.Vector(uint64(key))
		if !ok {
			continue
		}
		hits, err := g.Vectors.Search(ctx, backend.VectorQuery{Vector: v, K: 10, Ef: 256})
		if err != nil {
			t.Fatal(err)
		}
		tried++
		for _, h := range hits {
			if h.Key == key {
				found++
				break
			}
		}
	}
	g.Close()
	// 64 bits of a hashed bag of words (frequent words set the same bits in every passage)
	// tell passages apart coarsely: measured 317 of 358 at ef 256, 246 at ef 64.
	if tried < 50 || float64(found) < 0.85*float64(tried) {
		t.Errorf("binary search found %d of %d passages from their own vectors", found, tried)
	}

	int8 := fastHNSW
	int8.Codes = hnsw.CodesInt8
	_, err = updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: newer}}, Encoder: enc, HNSW: int8}, CompactRatio: -1})
	if err == nil || !strings.Contains(err.Error(), "--vectors int8") {
		t.Fatalf("update asking for int8 on a binary index: %v", err)
	}
	if _, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: newer}}, Encoder: enc, HNSW: fastHNSW}, CompactRatio: -1}); err != nil {
		t.Fatal(err)
	}
	gen, _ = manifest.Current(dir)
	m, _ := manifest.Read(gen)
	if m.Dense.HNSW.Codes != hnsw.CodesBinary {
		t.Fatalf("update recorded codes %q, want binary kept", m.Dense.HNSW.Codes)
	}
	verifyOK(t, gen)

	m.Dense.HNSW.Codes = ""
	if err := manifest.Write(gen, m); err != nil {
		t.Fatal(err)
	}
	if _, err := openDir(dir); err == nil || !strings.Contains(err.Error(), "binary codes, manifest says int8") {
		t.Fatalf("open with a manifest saying int8 over a binary graph: %v", err)
	}
}

// TestBinaryVectorsRefusedOnQdrant: binary codes belong to the local graph; a build of an index
// on Qdrant asking for them, a resumed build or an open choosing their rescoring, is refused
// before any cluster is contacted
// (port 1 answers nothing: a contact would fail as unreachable, not name the flag).
func TestBinaryVectorsRefusedOnQdrant(t *testing.T) {
	older, _, _, _, _ := scifactRevisions(t)
	bin := fastHNSW
	bin.Codes = hnsw.CodesBinary
	for _, op := range []struct {
		name string
		run  func(context.Context, Options) (*Summary, error)
	}{{"build", Build}, {"resume", resumeBuild}} {
		_, err := op.run(context.Background(), Options{Dir: "qdrant://127.0.0.1:1/kairos-test", Inputs: []InputSpec{{Path: older}},
			EmbedInline: true, Encoder: &countingEncoder{dim: 16}, HNSW: bin})
		if err == nil || !strings.Contains(err.Error(), "--vectors binary") {
			t.Errorf("%s on Qdrant with binary codes: %v", op.name, err)
		}
	}
	// So is an open choosing how binary codes are rescored (kairos search --binary-rescore).
	_, err := openReader(context.Background(), "qdrant://127.0.0.1:1/kairos-test", ReadOptions{BinaryRescore: hnsw.RescoreFloat})
	if err == nil || !strings.Contains(err.Error(), "--binary-rescore") {
		t.Errorf("open on Qdrant with binary rescoring: %v", err)
	}
}
