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
	Name          string `json:"name"`
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
}

// Compatible reports why vectors of model o cannot be searched against vectors of m, or nil.
// The name is not compared: the same weights under another folder name are the same model.
func (m Identity) Compatible(o Identity) error {
	var diffs []error
	switch {
	case m.ONNXSHA256 == o.ONNXSHA256:
	case m.Precision != "" && o.Precision != "" && m.Precision != o.Precision:
		// The same model at another precision: vectors are close but not the index's, and
		// the fix is a flag, so say which.
		diffs = append(diffs, fmt.Errorf("precision %s (%s), index built with %s (%s): pass --precision %s",
			o.Precision, o.ONNXFile, m.Precision, m.ONNXFile, m.Precision))
	default:
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
