package embed

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Pooling inside the graph (what --device cuda runs by default) gives the host's vectors to
// float32 rounding, for mean and CLS pooling, for fp32, fp16 and int8 files and for a graph
// whose output is float16 (cast to float32 before the sum), and keeps the
// model identity, so an index built on a GPU accepts queries encoded on the CPU. It runs here
// on the CPU provider with PoolOn graph: the same rewritten graph the GPU runs.
func TestPoolInGraphMatchesHost(t *testing.T) {
	requireORT(t)
	precisions := fixture(t, "minilm-l6-precisions")
	cls := linkModel(t, synthetic("minilm-l6"), map[string]string{
		"1_Pooling/config.json": `{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}`,
	})
	texts := append(testTexts(), scifactTexts(t, 40)...)
	tests := []struct {
		name, dir, precision string
		pooling              string // what the graph must pool
	}{
		{"mean fp32", synthetic("minilm-l6"), PrecisionFP32, "mean"},
		{"mean fp16", precisions, PrecisionFP16, "mean"},
		{"mean int8", precisions, PrecisionInt8, "mean"},
		{"cls fp32", cls, PrecisionFP32, "cls"},
		{"mean, float16 output", fixture(t, "tiny-fp16-io"), PrecisionFP16, "mean"},
		{"tiny encoder", synthetic("tiny-encoder"), PrecisionAuto, "mean"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			open := func(where string) *Encoder {
				e, err := OpenEncoder(ctx, Options{ModelDir: tc.dir, Backend: BackendORT, Precision: tc.precision, BatchSize: 7, PoolOn: where})
				if err != nil {
					t.Fatalf("pool on %s: %v", where, err)
				}
				t.Cleanup(func() { _ = e.Close() })
				return e
			}
			host, graph := open(PoolOnHost), open(PoolOnGraph)
			if host.io.pooled != "" {
				t.Fatalf("pool on host: the graph pools (%q)", host.io.pooled)
			}
			if graph.io.pooled != tc.pooling {
				t.Fatalf("pool on graph: the graph pools %q, want %q", graph.io.pooled, tc.pooling)
			}
			if host.Info() != graph.Info() {
				t.Errorf("identity differs:\nhost  %+v\ngraph %+v", host.Info(), graph.Info())
			}
			want, err := host.Encode(ctx, Passage, texts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graph.Encode(ctx, Passage, texts)
			if err != nil {
				t.Fatal(err)
			}
			worstCos, worstDiff := 1.0, 0.0
			for i := range want {
				if len(got[i]) != len(want[i]) {
					t.Fatalf("text %d: %d dimensions, want %d", i, len(got[i]), len(want[i]))
				}
				worstCos = math.Min(worstCos, cosine(got[i], want[i]))
				for k := range want[i] {
					worstDiff = math.Max(worstDiff, math.Abs(float64(got[i][k]-want[i][k])))
				}
			}
			t.Logf("worst cosine %.8f, worst |difference| %.2g", worstCos, worstDiff)
			if worstCos < 0.99999 || worstDiff > 1e-4 {
				t.Errorf("graph pooling vs host: worst cosine %.7f, worst |difference| %.2g over %d texts", worstCos, worstDiff, len(texts))
			}
		})
	}
}

// The rewrite refuses what it cannot pool (the caller then pools on the host) and fails, never
// panics, on bytes that are not an ONNX model.
func TestPoolInGraphRefuses(t *testing.T) {
	model, err := os.ReadFile(filepath.Join(synthetic("minilm-l6"), "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, output, mode string
		model              []byte
		notApplicable      bool // errNoGraphPooling: pool on the host instead
	}{
		{"max pooling", "last_hidden_state", "max", model, true},
		{"no such output", "pooler", "mean", model, false},
		{"not protobuf", "last_hidden_state", "mean", []byte("\xff\xff\xff\xff not onnx"), false},
		{"truncated", "last_hidden_state", "mean", model[:len(model)/2], false},
		{"empty", "last_hidden_state", "mean", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := poolInGraph(tc.model, tc.output, tc.mode)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, errNoGraphPooling) != tc.notApplicable {
				t.Errorf("error %q: errNoGraphPooling %v, want %v", err, !tc.notApplicable, tc.notApplicable)
			}
		})
	}
}

// FuzzPoolInGraph: any bytes give a model or an error, never a panic.
func FuzzPoolInGraph(f *testing.F) {
	if model, err := os.ReadFile(filepath.Join(synthetic("tiny-encoder"), "model.onnx")); err == nil {
		f.Add(model, "last_hidden_state", true)
	}
	f.Add([]byte{0x3a, 0x02, 0x62, 0x00}, "x", false)
	f.Fuzz(func(t *testing.T, model []byte, output string, mean bool) {
		mode := "cls"
		if mean {
			mode = "mean"
		}
		out, err := poolInGraph(model, output, mode)
		if err == nil && len(out) == 0 {
			t.Fatalf("no error and no model for output %q", output)
		}
	})
}
