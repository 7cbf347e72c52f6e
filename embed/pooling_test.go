package embed

import (
	"context"
	"math"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// rawHidden runs the ONNX file on ONE unpadded sequence with a session opened here, outside the
// package's batching code, and returns last_hidden_state as [seq][hidden].
func rawHidden(t *testing.T, onnxPath string, enc Encoding) [][]float32 {
	t.Helper()
	n := int64(len(enc.IDs))
	shape := ort.NewShape(1, n)
	mask := make([]int64, n)
	for i := range mask {
		mask[i] = 1
	}
	ids, _ := ort.NewTensor(shape, append([]int64(nil), enc.IDs...))
	am, _ := ort.NewTensor(shape, mask)
	tt, _ := ort.NewTensor(shape, append([]int64(nil), enc.TypeIDs...))
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, n, 64))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ids.Destroy(); am.Destroy(); tt.Destroy(); out.Destroy() }()
	s, err := ort.NewAdvancedSession(onnxPath, []string{"input_ids", "attention_mask", "token_type_ids"},
		[]string{"last_hidden_state"}, []ort.Value{ids, am, tt}, []ort.Value{out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	flat := out.GetData()
	h := make([][]float32, n)
	for i := range h {
		h[i] = flat[i*64 : (i+1)*64]
	}
	return h
}

// TestPoolingMatchesReference: Encode (batched, padded, length-sorted) equals mean / CLS / max
// pooling computed here by hand from the raw ONNX output of each text alone.
func TestPoolingMatchesReference(t *testing.T) {
	base := synthetic("tiny-encoder")
	for _, tc := range []struct {
		pooling string
		ref     func(h [][]float32) []float64
	}{
		{"mean", func(h [][]float32) []float64 {
			v := make([]float64, 64)
			for _, tok := range h {
				for k, x := range tok {
					v[k] += float64(x) / float64(len(h))
				}
			}
			return v
		}},
		{"cls", func(h [][]float32) []float64 {
			v := make([]float64, 64)
			for k, x := range h[0] {
				v[k] = float64(x)
			}
			return v
		}},
		{"max", func(h [][]float32) []float64 {
			v := make([]float64, 64)
			for k := range v {
				v[k] = math.Inf(-1)
				for _, tok := range h {
					v[k] = math.Max(v[k], float64(tok[k]))
				}
			}
			return v
		}},
	} {
		t.Run(tc.pooling, func(t *testing.T) {
			dir := linkModel(t, base, map[string]string{"kairos.json": `{"pooling": "` + tc.pooling + `"}`})
			e := openEnc(t, dir, BackendORT)
			if e.Info().Pooling != tc.pooling {
				t.Fatalf("Info().Pooling = %q", e.Info().Pooling)
			}
			texts := testTexts()
			got, err := e.Encode(context.Background(), Passage, texts)
			if err != nil {
				t.Fatal(err)
			}
			encs, _ := e.Tokenize(Passage, texts)
			cfg, _ := LoadFolderConfig(dir)
			for i := range texts {
				if len(encs[i].IDs) > 256 {
					t.Fatalf("text %d: %d tokens > max_seq_length", i, len(encs[i].IDs))
				}
				want := tc.ref(rawHidden(t, cfg.ONNXPath, encs[i]))
				var norm float64
				for _, x := range want {
					norm += x * x
				}
				norm = math.Sqrt(norm)
				for k := range want {
					if d := math.Abs(want[k]/norm - float64(got[i][k])); d > 1e-4 {
						t.Fatalf("text %d dim %d: got %.6f, reference %.6f", i, k, got[i][k], want[k]/norm)
					}
				}
			}
		})
	}
}
