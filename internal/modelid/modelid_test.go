package modelid

import (
	"strings"
	"testing"
)

func TestCompatible(t *testing.T) {
	base := Identity{Name: "m", ONNXSHA256: "aaaa", Dim: 384, Pooling: "mean", Normalize: true, MaxSeqLen: 256,
		ONNXFile: "model.onnx", Precision: "fp32"}
	tests := []struct {
		name    string
		change  func(*Identity)
		want    []string // substrings of the error; nil: compatible
		notWant string
	}{
		{"same", func(*Identity) {}, nil, ""},
		{"renamed folder", func(o *Identity) { o.Name = "other" }, nil, ""},
		{"other file, same bytes", func(o *Identity) { o.ONNXFile = "onnx/model.onnx" }, nil, ""},
		{"other precision", func(o *Identity) { o.ONNXSHA256, o.ONNXFile, o.Precision = "bbbb", "onnx/model_fp16.onnx", "fp16" },
			[]string{"precision fp16 (onnx/model_fp16.onnx), index built with fp32 (model.onnx): pass --precision fp32"}, "sha256"},
		{"other weights, same precision", func(o *Identity) { o.ONNXSHA256 = "bbbb" }, []string{"ONNX sha256 bbbb, index built with aaaa"}, "--precision"},
		{"manifest older than precisions", func(o *Identity) { o.ONNXSHA256, o.Precision = "bbbb", "" }, []string{"ONNX sha256"}, "--precision"},
		{"dimension", func(o *Identity) { o.Dim = 768 }, []string{"dimension 768, index has 384"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.change(&o)
			err := base.Compatible(o)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("want compatible, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("error %q mentions %q", err, tc.notWant)
			}
		})
	}
}
