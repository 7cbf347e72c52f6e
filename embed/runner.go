package embed

import (
	"context"
	"fmt"
	"log/slog"
)

// batchInput is one padded batch: n rows of seq tokens, row-major. Padding has id 0, mask 0.
type batchInput struct {
	n, seq int
	ids    []int64
	mask   []int64
	types  []int64
	lens   []int // real length of each row
}

// batchOutput is the chosen model output of one batch: shape [n, seq, d] (token embeddings) or
// [n, d] (pooled vectors or logits).
type batchOutput struct {
	data  []float32
	shape []int
	// release, when set, hands data back to the runner for a later batch; it is called once
	// every row has been emitted (pool copies what it keeps).
	release func()
}

// done releases the output's buffer, if it has one to give back.
func (o *batchOutput) done() {
	if o.release != nil {
		o.release()
		o.release, o.data = nil, nil
	}
}

// runner runs one ONNX graph on a batch. Both backends implement it; everything around it
// (tokenizing, batching, pooling) is shared, so the backends differ only in arithmetic.
type runner interface {
	run(ctx context.Context, in *batchInput) (batchOutput, error)
	backend() string
	close() error
}

// ioInfo is what openRunner learns about the graph.
type ioInfo struct {
	inputs  []string // input names the model declares, in its order
	output  string   // output chosen
	rank    int      // rank of that output: 3 (token embeddings) or 2 (pooled / logits)
	lastDim int      // its last dimension when static, else 0
	// pooled is the pooling the graph was given (poolInGraph, "mean" or "cls"): the output
	// then holds [n, dim] sentence vectors, though output names the token embeddings it pools.
	pooled string
}

// chooseOutput picks the output named want, else the preferred names in order, else the first.
func chooseOutput(names []string, want string, preferred ...string) (int, error) {
	if want != "" {
		for i, n := range names {
			if n == want {
				return i, nil
			}
		}
		return 0, fmt.Errorf("model has no output %q (outputs: %v)", want, names)
	}
	for _, p := range preferred {
		for i, n := range names {
			if n == p {
				return i, nil
			}
		}
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("model has no outputs")
	}
	return 0, nil
}

// openRunner opens the ONNX file with the requested backend; auto tries ort, then go (on the
// CPU only: --device cuda runs ort or fails).
// graphPool is the pooling to run inside the graph (ort only; see openORT), "" for none.
func openRunner(ctx context.Context, o Options, onnxPath, wantOutput string, preferred []string, graphPool string) (runner, ioInfo, error) {
	if o.Device.CUDA {
		// auto included: a GPU that cannot be used is an error, never a slow CPU run.
		return openORT(o, onnxPath, wantOutput, preferred, graphPool)
	}
	switch o.Backend {
	case BackendORT:
		return openORT(o, onnxPath, wantOutput, preferred, graphPool)
	case BackendGo:
		return openGo(ctx, o, onnxPath, wantOutput, preferred)
	}
	r, info, err := openORT(o, onnxPath, wantOutput, preferred, graphPool)
	if err == nil {
		o.Logger.Info("embed backend", slog.String("backend", BackendORT), slog.String("model", onnxPath))
		return r, info, nil
	}
	o.Logger.Warn("ONNX Runtime unavailable, using the pure-Go backend (much slower)", slog.Any("error", err))
	r, info, err2 := openGo(ctx, o, onnxPath, wantOutput, preferred)
	if err2 != nil {
		return nil, ioInfo{}, fmt.Errorf("ort: %v; go: %w", err, err2)
	}
	o.Logger.Info("embed backend", slog.String("backend", BackendGo), slog.String("model", onnxPath))
	return r, info, nil
}

// pad builds a batch from encodings, padded to the longest.
func pad(encs []Encoding) *batchInput {
	seq := 0
	for _, e := range encs {
		seq = maxInt(seq, len(e.IDs))
	}
	b := &batchInput{n: len(encs), seq: seq, lens: make([]int, len(encs))}
	b.ids = make([]int64, b.n*seq)
	b.mask = make([]int64, b.n*seq)
	b.types = make([]int64, b.n*seq)
	for i, e := range encs {
		row := i * seq
		copy(b.ids[row:], e.IDs)
		copy(b.types[row:], e.TypeIDs)
		for j := range e.IDs {
			b.mask[row+j] = 1
		}
		b.lens[i] = len(e.IDs)
	}
	return b
}
