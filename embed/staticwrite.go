package embed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// StaticTable is a static model to write in the Model2Vec layout: a float32 table of one row per
// token id of its tokenizer, optional per-token weights, and whether vectors are normalised.
type StaticTable struct {
	Rows, Dim  int
	Embeddings []float32 // Rows x Dim
	Weights    []float32 // Rows, or nil
	Normalize  bool
	// Tokenizer is the tokenizer.json copied into the folder; Rows must cover its ids.
	Tokenizer string
}

// WriteStaticModel writes t into dir as a Model2Vec folder (config.json, model.safetensors with
// "embeddings" and "weights", tokenizer.json), the layout OpenEncoder reads. Kairos writes such
// folders only for benchmarks (cmd/scalebench's topic model); each file is replaced atomically.
func WriteStaticModel(dir string, t StaticTable) error {
	if t.Rows < 1 || t.Dim < 1 || len(t.Embeddings) != t.Rows*t.Dim {
		return fmt.Errorf("static model: %d floats for %d rows of %d", len(t.Embeddings), t.Rows, t.Dim)
	}
	if t.Weights != nil && len(t.Weights) != t.Rows {
		return fmt.Errorf("static model: %d weights for %d rows", len(t.Weights), t.Rows)
	}
	tok, err := os.ReadFile(t.Tokenizer)
	if err != nil {
		return fmt.Errorf("static model: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tensors := []f32Tensor{{"embeddings", []int{t.Rows, t.Dim}, t.Embeddings}}
	if t.Weights != nil {
		tensors = append(tensors, f32Tensor{"weights", []int{t.Rows}, t.Weights})
	}
	err = atomicfile.Write(filepath.Join(dir, "model.safetensors"), atomicfile.Options{}, func(w io.Writer) error {
		return encodeSafetensors(w, tensors)
	})
	if err != nil {
		return fmt.Errorf("static model: %w", err)
	}
	config, err := json.MarshalIndent(map[string]any{
		"model_type": "model2vec", "architectures": []string{"StaticModel"}, "hidden_dim": t.Dim,
		"normalize": t.Normalize, "embedding_dtype": "float32",
	}, "", "  ")
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"config.json": config, "tokenizer.json": tok} {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), b, atomicfile.Options{}); err != nil {
			return fmt.Errorf("static model: %w", err)
		}
	}
	return nil
}

// f32Tensor is one float32 tensor to write.
type f32Tensor struct {
	name  string
	shape []int
	data  []float32
}

// encodeSafetensors writes float32 tensors in the safetensors format readSafetensors reads: the
// header's length (8 bytes, little-endian), the JSON header padded with spaces to 8 bytes, then
// each tensor's little-endian data in header order.
func encodeSafetensors(w io.Writer, tensors []f32Tensor) error {
	header := map[string]any{}
	off := 0
	for _, t := range tensors {
		n := 4 * len(t.data)
		header[t.name] = map[string]any{"dtype": "F32", "shape": t.shape, "data_offsets": [2]int{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	h = append(h, bytes.Repeat([]byte{' '}, (8-len(h)%8)%8)...)
	if err := binary.Write(w, binary.LittleEndian, uint64(len(h))); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, t := range tensors {
		for _, v := range t.data {
			if buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v)); len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// StaticTokenizer reads a tokenizer.json as a static model tokenizes: no special tokens, unknown
// words dropped, no truncation that a word could reach.
func StaticTokenizer(path string) (*Tokenizer, error) {
	return loadStaticTokenizer(path, math.MaxInt32)
}

// Pieces returns the token ids of text without special tokens (for a static tokenizer, unknown
// words dropped).
func (t *Tokenizer) Pieces(text string) []int {
	return t.pieces(text, -1)
}

// VocabSize is one more than the largest token id: the rows a static table needs.
func (t *Tokenizer) VocabSize() int {
	return maxTokenID(t) + 1
}
