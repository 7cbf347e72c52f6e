// Package embed computes sentence embeddings and cross-encoder scores in-process from ONNX models.
//
// It is the only Kairos package with cgo. Two backends run the same model:
//
//   - "ort": ONNX Runtime through github.com/yalue/onnxruntime_go, which loads libonnxruntime.so
//     at run time (ONNX Runtime 1.29.0's core library, from npm's com.github.asus4.onnxruntime;
//     `make ort` fetches it).
//   - "go": hugot's pure-Go GoMLX backend (no native code, much slower).
//
// The ort backend runs on the CPU or, with Options.Device cuda, on an NVIDIA GPU through ONNX
// Runtime's CUDA plugin execution provider (RegisterExecutionProviderLibrary, GetEpDevices,
// AppendExecutionProviderV2; the libraries of ONNX Runtime 1.29.0 that `make ort-gpu` fetches).
// A GPU that cannot be used is an error naming what is missing, never a silent CPU run.
//
// Both backends share one pure-Go tokenizer (the model folder's tokenizer.json, read by
// github.com/gomlx/go-huggingface), one batching scheme and one pooling implementation, so the
// only difference between them is the arithmetic of the ONNX graph: vectors agree to a cosine of
// at least 0.9999 (tested). On a CUDA device the mean or CLS pooling is appended to the ONNX
// graph instead (graphpool.go, Options.PoolOn), so only sentence vectors leave the GPU; the
// arithmetic is the same, in float32.
//
// A model folder is read the way sentence-transformers reads it: modules.json (is there a
// Normalize module?), 1_Pooling/config.json (mean, CLS or max pooling),
// sentence_bert_config.json (max_seq_length: texts are truncated there, not at the model's 512
// positions), config_sentence_transformers.json "prompts" (query/passage prefixes), and an
// optional kairos.json that overrides all of them (see FolderConfig).
//
// Static embedding models are a third kind, in pure Go (static.go): a folder whose
// modules.json starts with sentence_transformers.models.StaticEmbedding (at "." or in
// 0_StaticEmbedding/), or whose config.json says "model_type": "model2vec", holds a token
// table in model.safetensors ("embeddings" with optional "weights" and "mapping", or
// "embedding.weight"); a vector is the mean of its tokens' rows, tokenized without special
// tokens, unknown words dropped, at most 512 tokens, normalised as the folder says. OpenEncoder
// detects such a folder and needs neither ONNX Runtime nor cgo for it.
//
// Empty input: a text that is empty or only whitespace is rejected with ErrEmptyText (wrapped with
// its index). An embedding of "[CLS] [SEP]" is a valid vector that matches nothing in particular;
// returning it silently would put meaningless points into an index, so callers decide what to do
// (the embed CLI counts and reports such records).
package embed

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/kairos-rag/kairos/internal/modelid"
)

// Backend names accepted by Options.Backend.
const (
	BackendAuto = "auto" // ort when its library loads, else go
	BackendORT  = "ort"  // ONNX Runtime through onnxruntime_go
	BackendGo   = "go"   // hugot's pure-Go (GoMLX simplego) backend
)

// DefaultBatchSize is the number of texts run through the model at once on the CPU.
const DefaultBatchSize = 32

// DefaultCUDABatchSize is the batch on a CUDA device: the GPU's rate still grows past 32
// (all-MiniLM-L6 shape on an H100, issue 13: fp32 10,500 seq/s at 32, 12,900 at 256; fp16
// 15,400 at 32, 21,400 at 1024), and 256 rows of 256 tokens keep the output under 100 MB.
const DefaultCUDABatchSize = 256

// DefaultSortBatches is how many batches a CUDA device length-sorts together (Options.SortBatches).
const DefaultSortBatches = 8

// DefaultInFlight is how many model calls a CUDA device has in flight at once (Options.InFlight):
// on an H200 (MiniLM-L6 shape, fp16, batch 256, 200k passages) one ran 27,308 passages/s, two
// 29,540 and three 29,616: the second hides the gap between one call's end and the next.
const DefaultInFlight = 2

// Where token embeddings are pooled into sentence vectors (Options.PoolOn).
const (
	PoolOnAuto  = "auto"  // in the graph on a CUDA device, on the host on the CPU
	PoolOnGraph = "graph" // appended to the ONNX graph (mean and CLS pooling; others on the host)
	PoolOnHost  = "host"  // on the host's cores, from the token embeddings
)

// DefaultSortWindow is how many texts are length-sorted together on the CPU: the indexer
// hands the encoder this many passages at a time (see Encoder.SortWindow).
const DefaultSortWindow = 256

// EnvORTLib names the environment variable that overrides the ONNX Runtime library path.
const EnvORTLib = "KAIROS_ORT_LIB"

// ErrEmptyText is returned (wrapped with the text's index) for an empty or whitespace-only text.
var ErrEmptyText = errors.New("text is empty or whitespace")

// Options configures OpenEncoder and OpenCrossEncoder. The zero value of every field except
// ModelDir means "default".
type Options struct {
	// ModelDir is the model folder: tokenizer.json, config files and an ONNX file. Required.
	ModelDir string
	// Backend is auto (default), ort or go.
	Backend string
	// ORTLib is the path of libonnxruntime.so. Empty: $KAIROS_ORT_LIB, then
	// $HOME/.cache/kairos/onnxruntime-1.29.0/libonnxruntime.so (where `make ort` puts it).
	ORTLib string
	// Device is where the model runs: the CPU (zero value) or a CUDA GPU through ONNX
	// Runtime's CUDA plugin provider (backend ort; auto means ort). A GPU that cannot be used
	// is an error naming what is missing, never a silent run on the CPU.
	Device Device
	// ORTProviderLib is the path of libonnxruntime_providers_cuda.so, used with a CUDA Device.
	// Empty: $KAIROS_ORT_CUDA_LIB, then DefaultORTProviderLib (where `make ort-gpu` puts it).
	// With a CUDA Device and no ORTLib, the core library is the libonnxruntime.so beside it.
	ORTProviderLib string
	// Precision picks the model folder's ONNX file: auto (default), fp32 (model.onnx), fp16
	// (model_fp16.onnx) or int8 (model_int8.onnx, model_quantized.onnx, model_qint8_*.onnx),
	// each at the folder's top or under onnx/. Auto takes the fp16 file on a CUDA device when the
	// folder has one, and otherwise what the folder names (kairos.json "onnx", model.onnx,
	// onnx/model.onnx, or its only ONNX file). An explicit precision whose file is missing is an
	// error naming the folder and the files it has. The encoder's Identity records the file and
	// its precision, so an index refuses query vectors of another precision with a message
	// that names both.
	Precision string
	// BatchSize is the number of texts per model call (default 32 on the CPU,
	// DefaultCUDABatchSize on a CUDA device). Texts are sorted by token
	// length first, so a batch holds texts of similar length and pads little.
	BatchSize int
	// Dim truncates sentence vectors to their first Dim dimensions (a Matryoshka model, such
	// as static-retrieval-mrl-en-v1, is trained for it), renormalised when the model
	// normalises. 0 keeps the model's dimension; more than it is an error. The Identity
	// records it (Dim, FullDim), so an index refuses queries of another Dim.
	Dim int
	// Threads is ONNX Runtime's intra-op thread count (default GOMAXPROCS).
	Threads int
	// NoSpin makes ONNX Runtime's worker threads sleep between calls instead of spinning.
	// Spinning suits back-to-back batches (indexing); a process that does other work between
	// small calls (query encoding next to BM25 in search and serve) should set NoSpin, or the
	// spinning threads take the cores that work needs.
	NoSpin bool
	// PoolOn is where token embeddings become sentence vectors: auto (default: inside the
	// ONNX graph on a CUDA device, so only [n, dim] comes back from it instead of
	// [n, seq, dim]; on the host on the CPU, which keeps the CPU's vectors byte-identical to
	// earlier releases), graph or host. Graph pooling covers mean and CLS pooling of a model
	// whose weights are inside its file; other models are pooled on the host. The vectors
	// agree to rounding (float32 sums on the device, float64 on the host).
	PoolOn string
	// SortBatches is how many batches a CUDA device length-sorts together (the window the
	// indexer hands it at a time, see Encoder.SortWindow). Default DefaultSortBatches.
	SortBatches int
	// InFlight is how many batches a CUDA device runs at once (model calls on the one
	// session, each with its own inputs and outputs). Default DefaultInFlight.
	InFlight int
	// Logger receives backend choice and timing notes; nil means silent.
	Logger *slog.Logger
}

// SetDefaults sets the zero fields to their defaults (each field's comment says which).
func (o *Options) SetDefaults() {
	if o.Backend == "" {
		o.Backend = BackendAuto
	}
	if o.Precision == "" {
		o.Precision = PrecisionAuto
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
		if o.Device.CUDA {
			o.BatchSize = DefaultCUDABatchSize
		}
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.PoolOn == "" {
		o.PoolOn = PoolOnAuto
	}
	if o.SortBatches == 0 {
		o.SortBatches = DefaultSortBatches
	}
	if o.InFlight == 0 {
		o.InFlight = DefaultInFlight
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	if o.ModelDir == "" {
		return errors.New("embed options: ModelDir is required")
	}
	switch o.Backend {
	case "", BackendAuto, BackendORT, BackendGo:
	default:
		return fmt.Errorf("embed options: unknown backend %q (want auto, ort or go)", o.Backend)
	}
	if !validPrecision(o.Precision) {
		return fmt.Errorf("embed options: unknown precision %q (want auto, fp32, fp16 or int8)", o.Precision)
	}
	if o.Device.ID < 0 || o.Device.ID > maxDeviceID || (!o.Device.CUDA && o.Device.ID != 0) {
		return fmt.Errorf("embed options: device ordinal %d is not a CUDA device from 0 to %d", o.Device.ID, maxDeviceID)
	}
	if o.Device.CUDA && o.Backend == BackendGo {
		return fmt.Errorf("embed options: device %s needs backend ort (or auto); the go backend runs on the CPU only", o.Device)
	}
	if o.BatchSize < 0 {
		return fmt.Errorf("embed options: BatchSize %d < 0", o.BatchSize)
	}
	if o.Dim < 0 {
		return fmt.Errorf("embed options: Dim %d < 0", o.Dim)
	}
	if o.Threads < 0 {
		return fmt.Errorf("embed options: Threads %d < 0", o.Threads)
	}
	switch o.PoolOn {
	case "", PoolOnAuto, PoolOnGraph, PoolOnHost:
	default:
		return fmt.Errorf("embed options: unknown PoolOn %q (want auto, graph or host)", o.PoolOn)
	}
	if o.SortBatches < 0 {
		return fmt.Errorf("embed options: SortBatches %d < 0", o.SortBatches)
	}
	if o.InFlight < 0 || o.InFlight > 64 {
		return fmt.Errorf("embed options: InFlight %d outside 0..64", o.InFlight)
	}
	return nil
}

// poolInGraph reports whether the ONNX graph should pool (PoolOn with its default applied).
func (o Options) poolInGraph() bool {
	return o.PoolOn == PoolOnGraph || (o.PoolOn == PoolOnAuto && o.Device.CUDA)
}

// Kind says whether a text is a query or a passage; it selects the configured prefix.
type Kind int

const (
	// Query texts get the model's query prefix (e.g. "query: " for e5).
	Query Kind = iota
	// Passage texts get the model's passage prefix (e.g. "passage: " for e5).
	Passage
)

// String returns "query" or "passage".
func (k Kind) String() string {
	switch k {
	case Query:
		return "query"
	case Passage:
		return "passage"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ModelInfo identifies an encoder (an index records the Identity and refuses a different one)
// and says how it runs.
type ModelInfo struct {
	modelid.Identity        // Dim is 0 and Pooling "none" for a cross-encoder
	Output           string `json:"output"`  // ONNX output used
	Backend          string `json:"backend"` // backend actually used: ort or go
}
