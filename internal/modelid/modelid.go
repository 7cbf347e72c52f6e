// Package modelid is the identity of a sentence encoder: the one struct that embed fills in
// when it opens a model, that indexer records in a manifest, and that search compares before
// it embeds a query. It sits below all three so that none copies it field by field.
package modelid

import (
	"fmt"
	"strings"
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
// The error ends with what fixes it: --precision or --dim when only that differs (the same
// model at another precision or truncation), else the index's own model (Remedy).
func (m Identity) Compatible(o Identity) error {
	var diffs []string
	otherPrecision := false
	switch {
	case m.Kind != o.Kind:
		diffs = append(diffs, fmt.Sprintf("a %s model, index built with a %s model", kindName(o.Kind), kindName(m.Kind)))
	case m.ONNXSHA256 == o.ONNXSHA256:
	case m.Precision != "" && o.Precision != "" && m.Precision != o.Precision:
		otherPrecision = true
		diffs = append(diffs, fmt.Sprintf("precision %s (%s), index built with %s (%s)", o.Precision, o.ONNXFile, m.Precision, m.ONNXFile))
	default:
		diffs = append(diffs, fmt.Sprintf("ONNX sha256 %.12s, index built with %.12s", o.ONNXSHA256, m.ONNXSHA256))
	}
	otherDim := false
	switch {
	case m.Dim == o.Dim:
	case m.ONNXSHA256 == o.ONNXSHA256 && (m.FullDim != 0 || o.FullDim != 0):
		otherDim = true
		diffs = append(diffs, fmt.Sprintf("dimension %d, index has %d", o.Dim, m.Dim))
	default:
		diffs = append(diffs, fmt.Sprintf("dimension %d, index has %d", o.Dim, m.Dim))
	}
	if m.Pooling != o.Pooling || m.Normalize != o.Normalize {
		diffs = append(diffs, fmt.Sprintf("pooling %s/normalize %v, index has %s/%v", o.Pooling, o.Normalize, m.Pooling, m.Normalize))
	}
	if m.QueryPrefix != o.QueryPrefix || m.PassagePrefix != o.PassagePrefix {
		diffs = append(diffs, fmt.Sprintf("prefixes %q/%q, index has %q/%q", o.QueryPrefix, o.PassagePrefix, m.QueryPrefix, m.PassagePrefix))
	}
	if m.MaxSeqLen != o.MaxSeqLen {
		diffs = append(diffs, fmt.Sprintf("max_seq_len %d, index has %d", o.MaxSeqLen, m.MaxSeqLen))
	}
	if len(diffs) == 0 {
		return nil
	}
	// Only a flag away when nothing else differs: a precision or a truncation of the same
	// model. Suggested for another model, --precision led to a second refusal.
	fix := m.Remedy()
	switch {
	case len(diffs) == 1 && otherPrecision:
		fix = fmt.Sprintf("if the folder has %s (the index's %s file), pass --precision %s; else %s", m.ONNXFile, m.Precision, m.Precision, fix)
	case len(diffs) == 1 && otherDim:
		want := fmt.Sprint(m.Dim)
		if m.FullDim == 0 {
			want = "0 (all)"
		}
		fix = "pass --dim " + want
	}
	return fmt.Errorf("encoder %q does not match the index's %q: %s: %s", o.Name, m.Name, strings.Join(diffs, "; "), fix)
}

// Remedy says how to get the model m again: the folder the index records, which commands
// that take --model find without it, else the model's name, to pull or copy.
func (m Identity) Remedy() string {
	if m.Dir != "" {
		return fmt.Sprintf("use the index's own model: --model %s (or no --model: it is found there)", m.Dir)
	}
	return fmt.Sprintf("use the index's own model: --model with the folder of %s (kairos models list shows the pulled ones)", m.Name)
}
