package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/kairos-rag/kairos/internal/modelid"
)

// Encoder turns texts into sentence embeddings. It is safe for concurrent use.
type Encoder struct {
	core
	info     ModelInfo
	cuda     bool         // runs on a CUDA device
	static   *staticModel // a static model: no runner, vectors are table means (static.go)
	modelDim int          // the ONNX model's output dimension (info.Dim is less with Options.Dim)
	// sortBatches is how many batches a CUDA device sorts by length together (SortWindow).
	sortBatches int
}

// OpenEncoder loads the model folder opts.ModelDir with the requested backend.
func OpenEncoder(ctx context.Context, opts Options) (*Encoder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts
	o.SetDefaults()
	if err := checkModelFolder(o.ModelDir); err != nil {
		return nil, fmt.Errorf("opening encoder: %w", err)
	}
	if sf, ok, err := detectStatic(o.ModelDir); err != nil {
		return nil, fmt.Errorf("opening encoder: %w", err)
	} else if ok {
		e, err := openStatic(o, sf)
		if err != nil {
			return nil, fmt.Errorf("opening encoder: %w", err)
		}
		o.Logger.Info("embed backend", "backend", KindStatic, "model", o.ModelDir, "dim", e.info.Dim)
		return e, nil
	}
	cfg, err := LoadFolderConfigFor(o.ModelDir, o.Precision, o.Device)
	if err != nil {
		return nil, fmt.Errorf("opening encoder: %w", err)
	}
	tok, err := LoadTokenizer(filepath.Join(o.ModelDir, "tokenizer.json"), cfg.MaxSeqLen)
	if err != nil {
		return nil, fmt.Errorf("opening encoder: %w", err)
	}
	sum, err := fileSHA256(cfg.ONNXPath)
	if err != nil {
		return nil, fmt.Errorf("opening encoder: %w", err)
	}
	graphPool := ""
	if o.poolInGraph() && (cfg.Pooling == "mean" || cfg.Pooling == "cls") {
		graphPool = cfg.Pooling
	}
	r, gi, err := openRunner(ctx, o, cfg.ONNXPath, cfg.Output, []string{"last_hidden_state", "token_embeddings", "sentence_embedding"}, graphPool)
	if err != nil {
		return nil, fmt.Errorf("opening encoder: %w", err)
	}
	pooling := cfg.Pooling
	switch {
	case gi.pooled != "":
		// pooled inside the graph: the identity keeps the folder's pooling, so the index
		// accepts query vectors pooled on the host.
	case gi.rank == 2:
		pooling = "none" // the graph already pools
	case gi.rank != 3:
		_ = r.close()
		return nil, fmt.Errorf("opening encoder: output %s has rank %d, want 3 (token embeddings) or 2 (pooled)", gi.output, gi.rank)
	case pooling == "none":
		_ = r.close()
		return nil, fmt.Errorf("opening encoder: pooling \"none\" but output %s holds token embeddings", gi.output)
	}
	dim := gi.lastDim
	if dim == 0 {
		dim = cfg.HiddenSize
	}
	if dim == 0 { // neither the graph nor the config says: ask the model
		out, err := r.run(ctx, pad([]Encoding{tok.Encode("dimension probe")}))
		if err != nil {
			_ = r.close()
			return nil, fmt.Errorf("opening encoder: probing the output dimension: %w", err)
		}
		dim = out.shape[len(out.shape)-1]
	}
	outDim := dim
	if o.Dim > 0 {
		if o.Dim > dim {
			_ = r.close()
			return nil, fmt.Errorf("opening encoder: --dim %d exceeds the model's %d dimensions", o.Dim, dim)
		}
		outDim = o.Dim
	}
	e := &Encoder{
		modelDim:    dim,
		cuda:        o.Device.CUDA,
		core:        core{tok: tok, run: r, io: gi, batchSize: o.BatchSize, depth: depthFor(o.Device), inFlight: o.InFlight},
		sortBatches: o.SortBatches,
		info: ModelInfo{
			Identity: modelid.Identity{
				Name:          filepath.Base(filepath.Clean(o.ModelDir)),
				Dir:           absDir(o.ModelDir),
				ONNXSHA256:    sum,
				ONNXFile:      onnxFile(o.ModelDir, cfg.ONNXPath),
				Precision:     PrecisionOfFile(cfg.ONNXPath),
				Dim:           outDim,
				FullDim:       fullDimIfTruncated(outDim, dim),
				Pooling:       pooling,
				Normalize:     cfg.Normalize,
				MaxSeqLen:     cfg.MaxSeqLen,
				QueryPrefix:   cfg.QueryPrefix,
				PassagePrefix: cfg.PassagePrefix,
			},
			Output:  gi.output,
			Backend: r.backend(),
		},
	}
	return e, nil
}

// SortWindow is how many texts a caller should hand Encode (or each chunk of EncodeChunks) at
// a time: the texts of one call are length-sorted together, so the window bounds both the
// memory held and how well batches group by length. On the CPU it is DefaultSortWindow
// whatever the batch, which keeps the vectors byte-identical to earlier releases; on a CUDA
// device it is Options.SortBatches batches, so the GPU gets full, evenly padded batches back to
// back.
func (e *Encoder) SortWindow() int {
	if !e.cuda {
		return DefaultSortWindow
	}
	return max(DefaultSortWindow, e.sortBatches*e.batchSize)
}

// BatchSize is the number of texts per model call (Options.BatchSize with its default applied).
func (e *Encoder) BatchSize() int { return e.batchSize }

// Info describes the model and the backend in use.
func (e *Encoder) Info() ModelInfo { return e.info }

// Close releases the model session.
func (e *Encoder) Close() error {
	if e.static != nil {
		return nil
	}
	return e.run.close()
}

// Tokenize returns the model inputs Encode would build for texts (prefix added, truncated).
func (e *Encoder) Tokenize(kind Kind, texts []string) ([]Encoding, error) {
	prefix, err := e.prefix(kind)
	if err != nil {
		return nil, err
	}
	if err := checkTexts(texts); err != nil {
		return nil, err
	}
	return tokenizeAll(len(texts), func(i int) Encoding { return e.tok.Encode(prefix + texts[i]) }), nil
}

// Encode returns one vector per text, in input order, L2-normalised when the model folder says
// so. Texts are truncated at the model's max_seq_length. An empty or whitespace-only text fails
// the call with ErrEmptyText (see the package comment).
func (e *Encoder) Encode(ctx context.Context, kind Kind, texts []string) ([][]float32, error) {
	if e.static != nil {
		prefix, err := e.prefix(kind)
		if err != nil {
			return nil, err
		}
		if err := checkTexts(texts); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("encoding: %w", err)
		}
		return e.staticEncode(prefix, texts), nil
	}
	encs, err := e.Tokenize(kind, texts)
	if err != nil {
		return nil, err
	}
	return e.EncodeTokens(ctx, encs)
}

// EncodeTokens runs already tokenized inputs (from Tokenize) through the model.
func (e *Encoder) EncodeTokens(ctx context.Context, encs []Encoding) ([][]float32, error) {
	vecs := make([][]float32, len(encs))
	if e.static != nil {
		for i, enc := range encs {
			for _, id := range enc.IDs {
				if id < 0 || id >= int64(e.static.vocab()) {
					return nil, fmt.Errorf("encoding: text %d: token id %d outside the model's vocabulary", i, id)
				}
			}
		}
		return e.staticVectors(len(encs), func(i int, dst []int) []int {
			for _, id := range encs[i].IDs {
				dst = append(dst, int(id))
			}
			return dst
		}), nil
	}
	err := e.forEachBatch(ctx, encs, func(idx int, out *batchOutput, r, length int) error {
		if d := out.shape[len(out.shape)-1]; d != e.modelDim {
			return fmt.Errorf("model output dimension %d, expected %d", d, e.modelDim)
		}
		v := pool(out, r, length, e.info.Pooling)
		if len(v) > e.info.Dim { // --dim: keep the leading (Matryoshka) dimensions
			v = v[:e.info.Dim:e.info.Dim]
		}
		if e.info.Normalize {
			normalize(v)
		}
		vecs[idx] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	return vecs, nil
}

func (e *Encoder) prefix(kind Kind) (string, error) {
	switch kind {
	case Query:
		return e.info.QueryPrefix, nil
	case Passage:
		return e.info.PassagePrefix, nil
	}
	return "", fmt.Errorf("encoding: unknown kind %v", kind)
}

// checkTexts rejects empty or whitespace-only texts, naming the first.
func checkTexts(texts []string) error {
	for i, t := range texts {
		if IsBlank(t) {
			return fmt.Errorf("text %d: %w", i, ErrEmptyText)
		}
	}
	return nil
}

// IsBlank reports whether s is empty or only whitespace (the texts Encode rejects).
func IsBlank(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) }) < 0
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
