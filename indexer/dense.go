package indexer

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/modelid"
)

// ModelIdentity identifies a sentence encoder; the manifest records it (see internal/modelid).
type ModelIdentity = modelid.Identity

// PassageEncoder embeds passages at build time. The indexer declares it so that it needs no
// ONNX code; cmd adapts embed's encoder to it.
type PassageEncoder interface {
	Identity() ModelIdentity
	// EncodePassages returns one vector of Identity().Dim per text, in order.
	EncodePassages(ctx context.Context, texts []string) ([][]float32, error)
}

// DenseInfo describes the dense part of a generation.
type DenseInfo struct {
	Model   ModelIdentity `json:"model"`
	HNSW    HNSWParams    `json:"hnsw"`
	Vectors int           `json:"vectors"`
}

// HNSWParams are the graph parameters recorded in the manifest: hnsw.Options, whose JSON form
// holds M, EfConstruction, EfSearch and Seed.
type HNSWParams = hnsw.Options

// embedJob is a batch of passages, keyed, waiting for vectors.
type embedJob struct {
	keys  []uint32
	texts []string
	src   []uint32 // compaction: the keys whose stored vectors to reuse
}

// openVectors opens the vector part of a generation and checks it against the manifest.
func openVectors(ctx context.Context, eng backend.Vectors, g backend.Gen, man *Manifest, store *kpst.Store) (backend.VectorReader, error) {
	v, err := eng.Open(ctx, g, store)
	if err != nil {
		return nil, err
	}
	if v.Len() != man.Dense.Vectors || v.Dim() != man.Dense.Model.Dim {
		v.Close()
		return nil, fmt.Errorf("%s: the vector index has %d vectors of dim %d, manifest says %d of dim %d",
			g.Dir, v.Len(), v.Dim(), man.Dense.Vectors, man.Dense.Model.Dim)
	}
	return v, nil
}

// encodeChunk is how many passages the embedding stage hands the encoder at a time: large
// enough for its length grouping to pay, small enough that progress moves every few seconds
// on a CPU (a whole index batch is thousands of passages, minutes of CPU work).
const encodeChunk = 256

// encode embeds texts chunk by chunk, counting each chunk in the progress as it is done.
func (w *genWriter) encode(ctx context.Context, texts []string) ([][]float32, error) {
	vecs := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += encodeChunk {
		chunk := texts[start:min(start+encodeChunk, len(texts))]
		v, err := w.opts.Encoder.EncodePassages(ctx, chunk)
		if err != nil {
			return nil, err
		}
		vecs = append(vecs, v...)
		w.prog.passagesEmbedded(len(chunk))
	}
	return vecs, nil
}
