package embed

import (
	"flag"
	"fmt"
)

// Flags registers the options every command that runs a model shares, with the library's
// defaults: --backend, --ort-lib, --device, --ort-provider-lib, --precision, --dim, --pool-on,
// --sort-batches and --in-flight. The model folder, batch size
// and thread count are named differently by different commands, so BatchFlag and ThreadsFlag
// register those under the caller's name.
func (o *Options) Flags(fs *flag.FlagSet) {
	// The flags show the defaults SetDefaults fills in, where the flag takes the value itself
	// rather than 0 for "the default".
	d := *o
	d.SetDefaults()
	o.Backend, o.Precision, o.PoolOn = d.Backend, d.Precision, d.PoolOn
	fs.StringVar(&o.Backend, "backend", o.Backend, "inference backend: auto, ort or go")
	fs.StringVar(&o.Precision, "precision", o.Precision, "model file precision: `auto|fp32|fp16|int8` (model.onnx, model_fp16.onnx, model_int8.onnx or model_quantized.onnx, also under onnx/; auto: fp16 on cuda when the folder has it, else the folder's model.onnx)")
	fs.StringVar(&o.ORTLib, "ort-lib", o.ORTLib, "libonnxruntime.so `path` (default $"+EnvORTLib+", then the `make ort` cache; with --device cuda, the libonnxruntime.so beside the provider library)")
	fs.Var(&o.Device, "device", "where models run: `cpu|cuda|cuda:N` (default cpu; cuda:N is the N-th GPU, through ONNX Runtime's CUDA provider and backend ort; a GPU that cannot be used fails the command, never falls back to the CPU)")
	fs.IntVar(&o.Dim, "dim", o.Dim, "keep the first `N` dimensions of each sentence vector (Matryoshka models; 0: all), renormalised when the model normalises; recorded in the index, so queries need the same --dim")
	fs.StringVar(&o.PoolOn, "pool-on", o.PoolOn, "where token embeddings are pooled: `auto|graph|host` (auto: inside the ONNX graph on cuda, so only [n, dim] leaves the GPU; on the host on the CPU)")
	fs.IntVar(&o.SortBatches, "sort-batches", o.SortBatches, fmt.Sprintf("with --device cuda: batches length-sorted together, the window handed to the GPU at a time (0: %d)", DefaultSortBatches))
	fs.IntVar(&o.InFlight, "in-flight", o.InFlight, fmt.Sprintf("with --device cuda: batches run on the GPU at once (0: %d)", DefaultInFlight))
	fs.StringVar(&o.ORTProviderLib, "ort-provider-lib", o.ORTProviderLib, "with --device cuda: libonnxruntime_providers_cuda.so `path` (default $"+EnvORTCUDALib+", then the `make ort-gpu` cache)")
}

// BatchFlag registers BatchSize under name ("batch", "embed-batch"); its default, 0, is the
// library's: DefaultBatchSize on the CPU, DefaultCUDABatchSize on a CUDA device.
func (o *Options) BatchFlag(fs *flag.FlagSet, name string) {
	fs.IntVar(&o.BatchSize, name, o.BatchSize, fmt.Sprintf("texts per model call (0: %d on the CPU, %d on cuda)", DefaultBatchSize, DefaultCUDABatchSize))
}

// ThreadsFlag registers Threads as --threads; 0, the default, is GOMAXPROCS.
func (o *Options) ThreadsFlag(fs *flag.FlagSet) {
	fs.IntVar(&o.Threads, "threads", o.Threads, "ONNX Runtime intra-op threads (0: GOMAXPROCS)")
}
