package indexer

import (
	"context"
	"fmt"
	"path/filepath"

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

const hnswName = "dense.hnsw"

func hnswPath(genDir string) string { return filepath.Join(genDir, hnswName) }

// embedJob is a batch of passages, keyed, waiting for vectors.
type embedJob struct {
	keys  []uint64
	texts []string
	src   []uint64 // compaction: the keys whose stored vectors to reuse
}

// OpenHNSW loads the dense graph of a generation, or returns nil when it has none.
func openHNSW(genDir string, man *Manifest) (*hnsw.Graph, error) {
	if man.Dense == nil {
		return nil, nil
	}
	g, err := hnsw.Load(hnswPath(genDir))
	if err != nil {
		return nil, fmt.Errorf("%s: loading HNSW graph: %w", genDir, err)
	}
	if g.Len() != man.Dense.Vectors || g.Dim() != man.Dense.Model.Dim {
		return nil, fmt.Errorf("%s: HNSW graph has %d vectors of dim %d, manifest says %d of dim %d",
			genDir, g.Len(), g.Dim(), man.Dense.Vectors, man.Dense.Model.Dim)
	}
	return g, nil
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
