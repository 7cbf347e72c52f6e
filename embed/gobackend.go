package embed

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	_ "github.com/gomlx/gomlx/backends/simplego" // registers the pure-Go backend hugot's "GO" runtime uses
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
)

// goRunner runs the model through hugot's GO runtime (GoMLX simplego, no native code). Kairos
// feeds it its own token ids rather than using hugot's pipelines: hugot truncates at the model's
// 512 positions instead of max_seq_length and builds pairs by joining strings, so its pipelines
// would not give the same vectors as the ort backend.
type goRunner struct {
	model  *backends.Model
	output int // index of the chosen output (hugot computes all of them)
	// mu serialises calls: GoMLX executables compile per input shape and simplego already uses
	// every core within one call, so concurrent calls would only contend.
	mu sync.Mutex
}

func openGo(ctx context.Context, o Options, onnxPath, wantOutput string, preferred []string) (runner, ioInfo, error) {
	hopts := options.Defaults()
	hopts.Backend = "GO"
	// hugot finds the ONNX file by base name under the folder it is given.
	m, err := backends.LoadModel(ctx, filepath.Dir(onnxPath), filepath.Base(onnxPath), hopts, false)
	if err != nil {
		return nil, ioInfo{}, fmt.Errorf("opening %s with the Go backend: %w", onnxPath, err)
	}
	info := ioInfo{}
	for _, in := range m.InputsMeta {
		if _, err := inputData(&batchInput{}, in.Name); err != nil {
			_ = m.Destroy()
			return nil, ioInfo{}, fmt.Errorf("%s: %w", onnxPath, err)
		}
		info.inputs = append(info.inputs, in.Name)
	}
	names := backends.GetNames(m.OutputsMeta)
	k, err := chooseOutput(names, wantOutput, preferred...)
	if err != nil {
		_ = m.Destroy()
		return nil, ioInfo{}, fmt.Errorf("%s: %w", onnxPath, err)
	}
	info.output = names[k]
	dims := m.OutputsMeta[k].Dimensions
	info.rank = len(dims)
	if info.rank > 0 && dims[info.rank-1] > 0 {
		info.lastDim = int(dims[info.rank-1])
	}
	return &goRunner{model: m, output: k}, info, nil
}

func (r *goRunner) backend() string { return BackendGo }

func (r *goRunner) run(ctx context.Context, in *batchInput) (batchOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return batchOutput{}, err
	}
	batch := backends.NewBatch(in.n)
	defer batch.Destroy()
	batch.Input = make([]backends.TokenizedInput, in.n)
	for i := range in.n {
		l := in.lens[i]
		ti := backends.TokenizedInput{
			TokenIDs:      make([]uint32, l),
			TypeIDs:       make([]uint32, l),
			AttentionMask: make([]uint32, l),
		}
		row := i * in.seq
		for j := range l {
			ti.TokenIDs[j] = uint32(in.ids[row+j])
			ti.TypeIDs[j] = uint32(in.types[row+j])
			ti.AttentionMask[j] = 1
		}
		batch.Input[i] = ti
	}
	batch.MaxSequenceLength = in.seq
	if err := backends.CreateInputTensors(batch, r.model, "GO"); err != nil {
		return batchOutput{}, err
	}
	p := &backends.BasePipeline{Model: r.model, Runtime: "GO", SessionContext: ctx}
	if err := backends.RunSessionOnBatch(ctx, batch, p); err != nil {
		return batchOutput{}, err
	}
	switch v := batch.OutputValues[r.output].(type) {
	case [][][]float32: // hugot drops padding positions; put them back as zeros
		d := 0
		for _, row := range v {
			if len(row) > 0 {
				d = len(row[0])
				break
			}
		}
		out := batchOutput{data: make([]float32, in.n*in.seq*d), shape: []int{in.n, in.seq, d}}
		for i, row := range v {
			for j, tok := range row {
				copy(out.data[(i*in.seq+j)*d:], tok)
			}
		}
		return out, nil
	case [][]float32:
		d := len(v[0])
		out := batchOutput{data: make([]float32, 0, in.n*d), shape: []int{in.n, d}}
		for _, row := range v {
			out.data = append(out.data, row...)
		}
		return out, nil
	}
	return batchOutput{}, fmt.Errorf("unexpected Go backend output %T", batch.OutputValues[r.output])
}

func (r *goRunner) close() error { return r.model.Destroy() }
