package indexer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// ModelIdentity identifies a sentence encoder well enough to tell whether query vectors are
// comparable with an index's passage vectors. It is recorded in the manifest.
type ModelIdentity struct {
	Name          string `json:"name"`
	ONNXSHA256    string `json:"onnx_sha256"`
	Dim           int    `json:"dim"`
	Pooling       string `json:"pooling"`
	Normalize     bool   `json:"normalize"`
	MaxSeqLen     int    `json:"max_seq_len"`
	QueryPrefix   string `json:"query_prefix,omitempty"`
	PassagePrefix string `json:"passage_prefix,omitempty"`
}

// Compatible reports why vectors of model o cannot be searched against vectors of m, or nil.
// The name is not compared: the same weights under another folder name are the same model.
func (m ModelIdentity) Compatible(o ModelIdentity) error {
	var diffs []error
	if m.ONNXSHA256 != o.ONNXSHA256 {
		diffs = append(diffs, fmt.Errorf("ONNX sha256 %.12s, index built with %.12s", o.ONNXSHA256, m.ONNXSHA256))
	}
	if m.Dim != o.Dim {
		diffs = append(diffs, fmt.Errorf("dimension %d, index has %d", o.Dim, m.Dim))
	}
	if m.Pooling != o.Pooling || m.Normalize != o.Normalize {
		diffs = append(diffs, fmt.Errorf("pooling %s/normalize %v, index has %s/%v", o.Pooling, o.Normalize, m.Pooling, m.Normalize))
	}
	if m.QueryPrefix != o.QueryPrefix || m.PassagePrefix != o.PassagePrefix {
		diffs = append(diffs, fmt.Errorf("prefixes %q/%q, index has %q/%q", o.QueryPrefix, o.PassagePrefix, m.QueryPrefix, m.PassagePrefix))
	}
	if m.MaxSeqLen != o.MaxSeqLen {
		diffs = append(diffs, fmt.Errorf("max_seq_len %d, index has %d", o.MaxSeqLen, m.MaxSeqLen))
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("encoder %q does not match the index's %q: %w", o.Name, m.Name, errors.Join(diffs...))
}

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

// HNSWParams are the graph parameters recorded in the manifest.
type HNSWParams struct {
	M              int   `json:"m"`
	EfConstruction int   `json:"ef_construction"`
	EfSearch       int   `json:"ef_search"`
	Seed           int64 `json:"seed"`
}

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
