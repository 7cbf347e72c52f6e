package modelid

import (
	"strings"
	"testing"
)

func TestCompatible(t *testing.T) {
	base := Identity{Name: "m", ONNXSHA256: "aaaa", Dim: 384, Pooling: "mean", Normalize: true, MaxSeqLen: 256,
		ONNXFile: "model.onnx", Precision: "fp32", Dir: "/models/m"}
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
			[]string{"precision fp16 (onnx/model_fp16.onnx), index built with fp32 (model.onnx): if the folder has model.onnx (the index's fp32 file), pass --precision fp32; else use the index's own model: --model /models/m"}, "sha256"},
		// Another model at another precision: --precision would not fix it (issue 54: followed,
		// it gave a second refusal); the index's own model does.
		{"other model, other precision", func(o *Identity) {
			o.ONNXSHA256, o.ONNXFile, o.Precision, o.Dim = "bbbb", "onnx/model_fp16.onnx", "fp16", 768
		}, []string{"precision fp16 (onnx/model_fp16.onnx), index built with fp32 (model.onnx); dimension 768, index has 384: use the index's own model: --model /models/m (or no --model: it is found there)"}, "--precision"},
		{"another kind", func(o *Identity) { o.Kind, o.ONNXSHA256, o.Precision = "static", "cccc", "" },
			[]string{"a static model, index built with a onnx model: use the index's own model: --model /models/m"}, "--precision"},
		{"other weights, same precision", func(o *Identity) { o.ONNXSHA256 = "bbbb" }, []string{"ONNX sha256 bbbb, index built with aaaa"}, "--precision"},
		{"manifest older than precisions", func(o *Identity) { o.ONNXSHA256, o.Precision = "bbbb", "" }, []string{"ONNX sha256"}, "--precision"},
		{"dimension", func(o *Identity) { o.Dim = 768 }, []string{"dimension 768, index has 384"}, ""},
		{"a truncation of the same model", func(o *Identity) { o.Dim, o.FullDim = 128, 384 }, []string{"dimension 128, index has 384: pass --dim 0 (all)"}, "--model"},
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

// An index that does not record its model's folder (manifests before Dir) names the model.
func TestRemedyWithoutFolder(t *testing.T) {
	m := Identity{Name: "all-MiniLM-L6-v2"}
	if got, want := m.Remedy(), "use the index's own model: --model with the folder of all-MiniLM-L6-v2 (kairos models list shows the pulled ones)"; got != want {
		t.Errorf("Remedy() = %q, want %q", got, want)
	}
}
