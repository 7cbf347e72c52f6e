package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"
)

// ortEnv records the process's ONNX Runtime environment. It is package state on purpose:
// onnxruntime_go keeps the OrtEnv and the dlopen'ed library in its own package globals, so there
// can be exactly one per process whatever Kairos does; this guard makes every encoder share it
// and turns a second, different library path into an error instead of undefined behaviour.
// A mutex rather than sync.Once: a failed load (wrong path) must not poison later attempts with
// a corrected path. The environment is never destroyed: sessions may outlive any one encoder,
// and the process exit releases it.
var ortEnv struct {
	mu   sync.Mutex
	lib  string // path loaded; "" until loaded
	cuda string // CUDA provider library registered; "" until registered
}

// DefaultORTLib is where `make ort` puts the library: ONNX Runtime 1.29.0's core library in
// $HOME/.cache/kairos/onnxruntime-1.29.0 (the version the CUDA provider needs, so the CPU and
// the GPU run one version).
func DefaultORTLib() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "kairos", "onnxruntime-1.29.0", "libonnxruntime.so")
}

// ResolveORTLib returns the library path: explicit, then $KAIROS_ORT_LIB, then DefaultORTLib.
func ResolveORTLib(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if env := os.Getenv(EnvORTLib); env != "" {
		return env
	}
	return DefaultORTLib()
}

// initORT loads the library once per process.
func initORT(lib string) error {
	ortEnv.mu.Lock()
	defer ortEnv.mu.Unlock()
	if ortEnv.lib != "" {
		if ortEnv.lib != lib {
			return fmt.Errorf("ONNX Runtime already loaded from %s; a process can load only one (asked for %s)", ortEnv.lib, lib)
		}
		return nil
	}
	if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("ONNX Runtime library %s: %w (run `make ort`, or pass --ort-lib / set %s)", lib, err, EnvORTLib)
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(); err != nil {
		return fmt.Errorf("loading ONNX Runtime %s: %w", lib, err)
	}
	ortEnv.lib = lib
	return nil
}

// initCUDA loads the core library the CUDA provider needs, registers the provider and returns
// the device o.Device names. Every failure is one sentence that names what is missing and how
// to get it; there is no fallback to the CPU.
func initCUDA(o Options) (ort.EpDevice, error) {
	provider := ResolveORTProviderLib(o.ORTProviderLib)
	if err := checkProviderLib(provider); err != nil {
		return ort.EpDevice{}, err
	}
	core := resolveCUDACoreLib(o.ORTLib, provider)
	if err := initORT(core); err != nil {
		return ort.EpDevice{}, fmt.Errorf("--device cuda: %w", err)
	}
	ortEnv.mu.Lock()
	defer ortEnv.mu.Unlock()
	if err := registerCUDA(provider, ortEnv.lib); err != nil {
		return ort.EpDevice{}, err
	}
	return cudaDevice(o.Device.ID, provider)
}

// ortRunner runs a model through one ONNX Runtime session. ORT sessions are safe for concurrent
// Run calls, so one session serves every goroutine; intra-op threads parallelise each call.
type ortRunner struct {
	sess   *ort.DynamicAdvancedSession
	inputs []string
	half   *halfOutput // non-nil when the output is float16
	// outDim is the static last dimension of a float32 output of rank 2 or 3 whose other
	// dimensions are the batch's (and the sequence's): the output is then allocated here, in
	// Go memory, and ONNX Runtime writes into it (on a GPU, its copy back to the host) with no
	// second copy of the whole [n, seq, dim] tensor. 0: ONNX Runtime allocates the output.
	outDim, outRank int
	prealloc        atomic.Bool // false once a preallocated output was refused
	// outBufs recycles the preallocated outputs: a GPU batch of token embeddings is tens of
	// megabytes, allocated batch after batch (gigabytes a second). Measured on an H200, an index
	// build of 200k passages went from 4,074 to 4,342 passages/s with it: a small gain, kept
	// because it also spares the collector of a build whose heap limit follows its live heap.
	outBufs sync.Pool // of *[]float32
}

// openORT opens onnxPath in an ONNX Runtime session. graphPool, when not empty, is the pooling
// ("mean" or "cls") to run inside the graph when the chosen output holds token embeddings (see
// poolInGraph); a graph it does not apply to runs as it is, pooled on the host.
func openORT(o Options, onnxPath, wantOutput string, preferred []string, graphPool string) (runner, ioInfo, error) {
	var gpu *ort.EpDevice
	if o.Device.CUDA {
		d, err := initCUDA(o)
		if err != nil {
			return nil, ioInfo{}, err
		}
		gpu = &d
	} else if err := initORT(ResolveORTLib(o.ORTLib)); err != nil {
		return nil, ioInfo{}, err
	}
	ins, outs, err := ioInfoOf(onnxPath)
	if err != nil {
		return nil, ioInfo{}, fmt.Errorf("reading %s: %w", onnxPath, err)
	}
	info := ioInfo{}
	for _, in := range ins {
		if in.DataType != ort.TensorElementDataTypeInt64 {
			return nil, ioInfo{}, fmt.Errorf("%s: input %s is %v, want int64", onnxPath, in.Name, in.DataType)
		}
		info.inputs = append(info.inputs, in.Name)
	}
	names := make([]string, len(outs))
	for i, out := range outs {
		names[i] = out.Name
	}
	k, err := chooseOutput(names, wantOutput, preferred...)
	if err != nil {
		return nil, ioInfo{}, fmt.Errorf("%s: %w", onnxPath, err)
	}
	info.output = outs[k].Name
	dims := outs[k].Dimensions
	var half *halfOutput
	switch outs[k].DataType {
	case ort.TensorElementDataTypeFloat:
	case ort.TensorElementDataTypeFloat16:
		if half, err = newHalfOutput(onnxPath, info.output, dims); err != nil {
			return nil, ioInfo{}, err
		}
	default:
		return nil, ioInfo{}, fmt.Errorf("%s: output %s is %v, want float32 or float16", onnxPath, info.output, outs[k].DataType)
	}
	info.rank = len(dims)
	if info.rank > 0 && dims[info.rank-1] > 0 {
		info.lastDim = int(dims[info.rank-1])
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, ioInfo{}, err
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(o.Threads); err != nil {
		return nil, ioInfo{}, err
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, ioInfo{}, err
	}
	if !o.Device.CUDA && PrecisionOfFile(onnxPath) == PrecisionFP16 {
		// ONNX Runtime's CPU provider has few float16 kernels and wraps the others in Casts;
		// 1.27's extended fusions then fail on those Casts (SimplifiedLayerNormFusion,
		// "Attempting to get index by a name which does not exist: InsertedPrecisionFreeCast_").
		// 1.29, which `make ort` fetches, loads the fp16 fixture at full optimization, but
		// --ort-lib may name an older library. Basic optimizations (constant folding,
		// redundant node removal) are safe in both.
		if err := so.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableBasic); err != nil {
			return nil, ioInfo{}, err
		}
	}
	if o.NoSpin {
		if err := so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
			return nil, ioInfo{}, err
		}
	}
	if gpu != nil {
		// The plugin API: the legacy AppendExecutionProviderCUDA answers "CUDA execution
		// provider is not enabled in this build" with these libraries.
		if err := so.AppendExecutionProviderV2([]ort.EpDevice{*gpu}, nil); err != nil {
			return nil, ioInfo{}, fmt.Errorf("--device %s: adding the CUDA provider to the session of %s: %w", o.Device, onnxPath, err)
		}
	}
	var pooledModel []byte
	if graphPool != "" && info.rank == 3 {
		model, err := os.ReadFile(onnxPath)
		if err != nil {
			return nil, ioInfo{}, err
		}
		pooledModel, err = poolInGraph(model, info.output, graphPool)
		switch {
		case errors.Is(err, errNoGraphPooling):
			o.Logger.Info("pooling on the host", slog.String("model", onnxPath), slog.Any("reason", err))
			pooledModel = nil
		case err != nil:
			return nil, ioInfo{}, fmt.Errorf("%s: %w", onnxPath, err)
		}
	}
	var sess *ort.DynamicAdvancedSession
	if pooledModel != nil {
		sess, err = ort.NewDynamicAdvancedSessionWithONNXData(pooledModel, info.inputs, []string{pooledOutput}, so)
		info.pooled, info.rank, half = graphPool, 2, nil
	} else {
		sess, err = ort.NewDynamicAdvancedSession(onnxPath, info.inputs, []string{info.output}, so)
	}
	if err != nil {
		return nil, ioInfo{}, fmt.Errorf("opening %s with ONNX Runtime: %w", onnxPath, err)
	}
	r := &ortRunner{sess: sess, inputs: info.inputs, half: half}
	if half == nil && info.lastDim > 0 && (info.rank == 2 || info.rank == 3) {
		r.outDim, r.outRank = info.lastDim, info.rank
		r.prealloc.Store(true)
	}
	return r, info, nil
}

// ioInfoOf reads the model's inputs and outputs through a session that optimizes nothing: the
// default one would run every graph fusion just to list names (and fails where a fusion does,
// see the float16 note in openORT).
func ioInfoOf(onnxPath string) ([]ort.InputOutputInfo, []ort.InputOutputInfo, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, nil, err
	}
	defer so.Destroy()
	if err := so.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll); err != nil {
		return nil, nil, err
	}
	return ort.GetInputOutputInfoWithOptions(onnxPath, so)
}

func (r *ortRunner) backend() string { return BackendORT }

func (r *ortRunner) run(ctx context.Context, in *batchInput) (batchOutput, error) {
	if err := ctx.Err(); err != nil {
		return batchOutput{}, err
	}
	shape := ort.NewShape(int64(in.n), int64(in.seq))
	vals := make([]ort.Value, 0, len(r.inputs))
	defer func() {
		for _, v := range vals {
			v.Destroy()
		}
	}()
	for _, name := range r.inputs {
		data, err := inputData(in, name)
		if err != nil {
			return batchOutput{}, err
		}
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return batchOutput{}, err
		}
		vals = append(vals, t)
	}
	ro, err := ort.NewRunOptions()
	if err != nil {
		return batchOutput{}, err
	}
	defer ro.Destroy()
	// Cancelling ctx terminates the running call instead of waiting for the batch to finish.
	stop := context.AfterFunc(ctx, func() { _ = ro.Terminate() })
	defer stop()
	outs := []ort.Value{nil}
	if r.half != nil {
		t, err := r.half.tensor(in.n, in.seq)
		if err != nil {
			return batchOutput{}, err
		}
		defer t.Destroy()
		outs[0] = t
	}
	var pre *ort.Tensor[float32]
	var release func()
	if r.half == nil && r.prealloc.Load() {
		shape := ort.NewShape(int64(in.n), int64(r.outDim))
		if r.outRank == 3 {
			shape = ort.NewShape(int64(in.n), int64(in.seq), int64(r.outDim))
		}
		need := int(shape.FlattenedSize())
		buf, _ := r.outBufs.Get().(*[]float32)
		if buf == nil || cap(*buf) < need {
			b := make([]float32, need)
			buf = &b
		}
		*buf = (*buf)[:need]
		if pre, err = ort.NewTensor(shape, *buf); err != nil {
			return batchOutput{}, err
		}
		defer pre.Destroy()
		outs[0] = pre
		release = func() { r.outBufs.Put(buf) }
	}
	if err := r.sess.RunWithOptions(vals, outs, ro); err != nil {
		if ctx.Err() != nil {
			return batchOutput{}, ctx.Err()
		}
		if pre == nil {
			return batchOutput{}, err
		}
		// The graph's output is not [n, (seq,) dim] after all: let ONNX Runtime allocate it
		// from now on.
		r.prealloc.Store(false)
		outs[0], pre = nil, nil
		if err := r.sess.RunWithOptions(vals, outs, ro); err != nil {
			return batchOutput{}, err
		}
	}
	if r.half != nil {
		return r.half.decode(outs[0].(*ort.CustomDataTensor)), nil
	}
	if pre != nil {
		// The tensor's data is a Go slice that ONNX Runtime only borrowed: it outlives Destroy.
		s := pre.GetShape()
		out := batchOutput{data: pre.GetData(), shape: make([]int, len(s)), release: release}
		for i, d := range s {
			out.shape[i] = int(d)
		}
		return out, nil
	}
	defer outs[0].Destroy()
	t, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return batchOutput{}, errors.New("model output is not a float32 tensor")
	}
	s := t.GetShape()
	out := batchOutput{data: append([]float32(nil), t.GetData()...), shape: make([]int, len(s))}
	for i, d := range s {
		out.shape[i] = int(d)
	}
	return out, nil
}

func (r *ortRunner) close() error { return r.sess.Destroy() }

// inputData maps an ONNX input name to the batch's data.
func inputData(in *batchInput, name string) ([]int64, error) {
	switch name {
	case "input_ids":
		return in.ids, nil
	case "attention_mask":
		return in.mask, nil
	case "token_type_ids":
		return in.types, nil
	}
	return nil, fmt.Errorf("model input %q is not supported (want input_ids, attention_mask, token_type_ids)", name)
}
