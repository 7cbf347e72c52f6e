package embed

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/modelid"
)

// CrossEncoder scores (query, passage) pairs with a sequence-classification model that has one
// logit per pair (e.g. cross-encoder/ms-marco-MiniLM-L-12-v2). It is safe for concurrent use.
type CrossEncoder struct {
	core
	info ModelInfo
}

// OpenCrossEncoder loads the cross-encoder folder opts.ModelDir. Pairs are truncated to the
// folder's max length (sentence_bert_config.json, else tokenizer_config.json model_max_length,
// capped by max_position_embeddings), longest side first.
func OpenCrossEncoder(ctx context.Context, opts Options) (*CrossEncoder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts
	o.SetDefaults()
	cfg, err := LoadFolderConfigFor(o.ModelDir, o.Precision, o.Device)
	if err != nil {
		return nil, fmt.Errorf("opening cross-encoder: %w", err)
	}
	tok, err := LoadTokenizer(filepath.Join(o.ModelDir, "tokenizer.json"), cfg.MaxSeqLen)
	if err != nil {
		return nil, fmt.Errorf("opening cross-encoder: %w", err)
	}
	sum, err := fileSHA256(cfg.ONNXPath)
	if err != nil {
		return nil, fmt.Errorf("opening cross-encoder: %w", err)
	}
	r, gi, err := openRunner(ctx, o, cfg.ONNXPath, cfg.Output, []string{"logits"}, "")
	if err != nil {
		return nil, fmt.Errorf("opening cross-encoder: %w", err)
	}
	if gi.rank != 2 || (gi.lastDim != 0 && gi.lastDim != 1) {
		_ = r.close()
		return nil, fmt.Errorf("opening cross-encoder: output %s must be [batch, 1] logits (rank %d, last dim %d)", gi.output, gi.rank, gi.lastDim)
	}
	return &CrossEncoder{
		core: core{tok: tok, run: r, io: gi, batchSize: o.BatchSize, depth: depthFor(o.Device)},
		info: ModelInfo{
			Identity: modelid.Identity{
				Name:       filepath.Base(filepath.Clean(o.ModelDir)),
				ONNXSHA256: sum,
				ONNXFile:   onnxFile(o.ModelDir, cfg.ONNXPath),
				Precision:  PrecisionOfFile(cfg.ONNXPath),
				Pooling:    "none",
				MaxSeqLen:  cfg.MaxSeqLen,
			},
			Output:  gi.output,
			Backend: r.backend(),
		},
	}, nil
}

// Info describes the model and the backend in use (Dim is 0).
func (c *CrossEncoder) Info() ModelInfo { return c.info }

// Close releases the model session.
func (c *CrossEncoder) Close() error { return c.run.close() }

// Score returns the raw relevance logit of each passage for query, in passage order (higher is
// more relevant; apply a sigmoid for a 0..1 score). An empty query or passage is ErrEmptyText.
func (c *CrossEncoder) Score(ctx context.Context, query string, passages []string) ([]float32, error) {
	if IsBlank(query) {
		return nil, fmt.Errorf("scoring: query: %w", ErrEmptyText)
	}
	if err := checkTexts(passages); err != nil {
		return nil, fmt.Errorf("scoring: passage %w", err)
	}
	encs := tokenizeAll(len(passages), func(i int) Encoding { return c.tok.EncodePair(query, passages[i]) })
	scores := make([]float32, len(passages))
	err := c.forEachBatch(ctx, encs, func(idx int, out *batchOutput, r, _ int) error {
		if len(out.shape) != 2 || out.shape[1] != 1 {
			return fmt.Errorf("cross-encoder output shape %v, want [n, 1]", out.shape)
		}
		scores[idx] = out.data[r]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scoring: %w", err)
	}
	return scores, nil
}
