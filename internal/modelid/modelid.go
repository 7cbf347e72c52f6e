// Package modelid is the identity of a sentence encoder: the one struct that embed fills in
// when it opens a model, that indexer records in a manifest, and that search compares before
// it embeds a query. It sits below all three so that none copies it field by field.
package modelid

import (
	"errors"
	"fmt"
)

// Identity identifies a sentence encoder well enough to tell whether query vectors are
// comparable with an index's passage vectors. The encoder reports it, and an index manifest
// records it.
type Identity struct {
	Name string `json:"name"`
	// Kind is "static" for a static embedding model (a token table, mean pooled; ONNXSHA256
	// and ONNXFile then name its safetensors file) and empty for an ONNX encoder.
	Kind          string `json:"kind,omitempty"`
	ONNXSHA256    string `json:"onnx_sha256"`
	Dim           int    `json:"dim"`
	Pooling       string `json:"pooling"`
	Normalize     bool   `json:"normalize"`
	MaxSeqLen     int    `json:"max_seq_len"`
	QueryPrefix   string `json:"query_prefix,omitempty"`
	PassagePrefix string `json:"passage_prefix,omitempty"`
	// ONNXFile is the model file inside the folder (model.onnx, onnx/model_fp16.onnx) and
	// Precision what its name says it holds (fp32, fp16, int8). They explain a sha256
	// mismatch between precisions of one model; manifests written before them lack both.
	ONNXFile  string `json:"onnx_file,omitempty"`
	Precision string `json:"precision,omitempty"`
	// FullDim is the model's own dimension when Dim keeps only its first Dim (Matryoshka
	// truncation, --dim); 0 when the vectors are whole.
	FullDim int `json:"full_dim,omitempty"`
	// Dir is the absolute path of the folder the model was opened from. It is where, not
	// what: Compatible ignores it. An index records it so that search and serve can find the
	// model again without --model (manifests written before it lack it).
	Dir string `json:"dir,omitempty"`
}

// kindName names a Kind in messages.
func kindName(k string) string {
	if k == "" {
		return "onnx"
	}
	return k
}

// Compatible reports why vectors of model o cannot be searched against vectors of m, or nil.
// The name is not compared: the same weights under another folder name are the same model.
func (m Identity) Compatible(o Identity) error {
	var diffs []error
	switch {
	case m.Kind != o.Kind:
		diffs = append(diffs, fmt.Errorf("a %s model, index built with a %s model", kindName(o.Kind), kindName(m.Kind)))
	case m.ONNXSHA256 == o.ONNXSHA256:
	case m.Precision != "" && o.Precision != "" && m.Precision != o.Precision:
		// The same model at another precision: vectors are close but not the index's, and
		// the fix is a flag, so say which.
		diffs = append(diffs, fmt.Errorf("precision %s (%s), index built with %s (%s): pass --precision %s",
			o.Precision, o.ONNXFile, m.Precision, m.ONNXFile, m.Precision))
	default:
		diffs = append(diffs, fmt.Errorf("ONNX sha256 %.12s, index built with %.12s", o.ONNXSHA256, m.ONNXSHA256))
	}
	switch {
	case m.Dim == o.Dim:
	case m.ONNXSHA256 == o.ONNXSHA256 && (m.FullDim != 0 || o.FullDim != 0):
		// The same model truncated differently: the fix is a flag.
		want := fmt.Sprint(m.Dim)
		if m.FullDim == 0 {
			want = "0 (all)"
		}
		diffs = append(diffs, fmt.Errorf("dimension %d, index has %d: pass --dim %s", o.Dim, m.Dim, want))
	default:
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
