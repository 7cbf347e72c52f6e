package embed

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
)

// core is what Encoder and CrossEncoder share: a tokenizer, a runner and the batching loop.
type core struct {
	tok       *Tokenizer
	run       runner
	io        ioInfo
	batchSize int
	depth     int // batches queued between pipeline stages; 0 runs them one after another
	inFlight  int // model calls at once when pipelined (0 or 1: one)
}

// tokenizeAll encodes n inputs with enc on up to GOMAXPROCS goroutines (tokenizing a large
// corpus single-threaded would leave cores idle while ORT waits).
func tokenizeAll(n int, enc func(i int) Encoding) []Encoding {
	out := make([]Encoding, n)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				out[i] = enc(i)
			}
		}()
	}
	wg.Wait()
	return out
}

// lengthOrder returns input indices sorted by token count (stable), so each batch holds
// neighbours in length and padding wastes little compute.
func lengthOrder(encs []Encoding) []int {
	order := make([]int, len(encs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(encs[order[a]].IDs) < len(encs[order[b]].IDs) })
	return order
}

// pipelineDepth is how many batches wait between the stages of forEachBatch: two keeps the
// model fed while the next batch is padded and the last one pooled, without holding more
// than a few batch outputs in memory.
const pipelineDepth = 2

// depthFor is the pipeline depth on a device. A GPU computes while the CPU pads, pools and
// tokenizes, so the stages overlap there. On the CPU, ONNX Runtime's intra-op threads already
// take every core for the model, which is nearly all of the time: overlapping the rest can
// gain little, and a goroutine that preempts one of those threads stalls its parallel loop.
// BenchmarkEncodeSciFact on the shared 2-core machine (load 9 to 18, four runs) gave 2.8 to
// 5.1 passages/s pipelined against 3.8 to 4.8 sequential: no gain, so the CPU keeps the
// sequential loop.
func depthFor(d Device) int {
	if d.CUDA {
		return pipelineDepth
	}
	return 0
}

// paddedBatch is the padded input of the texts order[start:end].
type paddedBatch struct {
	start, end int
	in         *batchInput
}

// ranBatch is a padded batch with the model's output.
type ranBatch struct {
	paddedBatch
	out batchOutput
}

// forEachBatch runs the model over encs in length order and calls emit for every input with its
// index and the batch output row it owns. The batches are the same whatever the pipeline
// (consecutive runs of the length order), so the vectors are byte-identical to a sequential
// loop's; with c.depth > 0 three stages overlap: padding the next batch, running the model on
// this one, and emitting (pooling) the rows of the previous one, in the caller's goroutine.
func (c *core) forEachBatch(ctx context.Context, encs []Encoding, emit func(idx int, out *batchOutput, row int, length int) error) error {
	order := lengthOrder(encs)
	if c.depth <= 0 {
		return c.sequential(ctx, encs, order, emit)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	inputs := make(chan paddedBatch, c.depth)
	outputs := make(chan ranBatch, c.depth)
	var wg, runs sync.WaitGroup
	wg.Go(func() { // pad
		defer close(inputs)
		defer recoverInto(cancel, "padding a batch")
		for start := 0; start < len(order); start += c.batchSize {
			end := min(start+c.batchSize, len(order))
			select {
			case inputs <- paddedBatch{start, end, c.padBatch(encs, order[start:end])}:
			case <-ctx.Done():
				return
			}
		}
	})
	// run: inFlight calls at once, each on its own batch. The batches are the same whatever
	// finishes first, and emit places each row by its input index, so the vectors are too.
	for range max(1, c.inFlight) {
		runs.Go(func() {
			defer recoverInto(cancel, "running the model")
			for p := range inputs {
				out, err := c.runBatch(ctx, p.in)
				if err != nil {
					cancel(err)
					return
				}
				select {
				case outputs <- ranBatch{p, out}:
				case <-ctx.Done():
					out.done()
					return
				}
			}
		})
	}
	wg.Go(func() {
		runs.Wait()
		close(outputs)
	})
	var emitErr error
	for b := range outputs { // emit; after an error, drain until the stages stop
		if emitErr == nil {
			emitErr = emitRowsParallel(order[b.start:b.end], b.in, &b.out, emit)
			b.out.done()
			if emitErr != nil {
				cancel(emitErr)
			}
		}
	}
	wg.Wait()
	if emitErr != nil {
		return emitErr
	}
	return context.Cause(ctx)
}

// sequential is forEachBatch with no overlap (c.depth 0): the reference the pipeline must equal.
func (c *core) sequential(ctx context.Context, encs []Encoding, order []int, emit func(idx int, out *batchOutput, row int, length int) error) error {
	for start := 0; start < len(order); start += c.batchSize {
		rows := order[start:min(start+c.batchSize, len(order))]
		in := c.padBatch(encs, rows)
		out, err := c.runBatch(ctx, in)
		if err != nil {
			return err
		}
		err = emitRows(rows, in, &out, emit)
		out.done()
		if err != nil {
			return err
		}
	}
	return nil
}

// padBatch pads the encodings of the given input indices into one batch.
func (c *core) padBatch(encs []Encoding, rows []int) *batchInput {
	batch := make([]Encoding, len(rows))
	for i, idx := range rows {
		batch[i] = encs[idx]
	}
	return pad(batch)
}

// runBatch runs one padded batch and checks the output holds one row per input.
func (c *core) runBatch(ctx context.Context, in *batchInput) (batchOutput, error) {
	out, err := c.run.run(ctx, in)
	if err != nil {
		return out, fmt.Errorf("running batch of %d texts x %d tokens: %w", in.n, in.seq, err)
	}
	if len(out.shape) == 0 || out.shape[0] != in.n {
		return out, fmt.Errorf("model output shape %v for a batch of %d", out.shape, in.n)
	}
	return out, nil
}

// emitRows hands every row of a batch output to emit with its input index.
func emitRows(rows []int, in *batchInput, out *batchOutput, emit func(idx int, out *batchOutput, row int, length int) error) error {
	for r, idx := range rows {
		if err := emit(idx, out, r, in.lens[r]); err != nil {
			return err
		}
	}
	return nil
}

// emitRowsParallel is emitRows over the rows split among up to GOMAXPROCS goroutines: on a
// GPU, a batch of token embeddings (256 texts x 150 tokens x 384 floats) pooled on one core
// held the model back. On an H200 (MiniLM-L6 shape, fp16, batch 256, 200k passages) the model
// alone ran at 6,405 passages/s before this and the Go-allocated output (ortRunner.outDim),
// 11,925 after. emit must be safe for concurrent calls with distinct idx (EncodeTokens and
// Score write their own slot).
func emitRowsParallel(rows []int, in *batchInput, out *batchOutput, emit func(idx int, out *batchOutput, row int, length int) error) error {
	const minRows = 16 // rows per goroutine below which the spawning costs more than it saves
	workers := min(runtime.GOMAXPROCS(0), len(rows)/minRows)
	if workers <= 1 {
		return emitRows(rows, in, out, emit)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[w] = fmt.Errorf("pooling: panic: %v", r)
				}
			}()
			for r := w; r < len(rows); r += workers {
				if err := emit(rows[r], out, r, in.lens[r]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// recoverInto turns a panic in a pipeline stage into the pipeline's error, so one bad batch
// fails the call instead of the process.
func recoverInto(cancel context.CancelCauseFunc, stage string) {
	if r := recover(); r != nil {
		cancel(fmt.Errorf("%s: panic: %v", stage, r))
	}
}

// pool reduces row r of a [n, seq, d] output (first length tokens real) to one vector, or
// copies row r of a [n, d] output.
func pool(out *batchOutput, r, length int, mode string) []float32 {
	if len(out.shape) == 2 {
		d := out.shape[1]
		return append([]float32(nil), out.data[r*d:(r+1)*d]...)
	}
	seq, d := out.shape[1], out.shape[2]
	base := r * seq * d
	v := make([]float32, d)
	switch mode {
	case "cls":
		copy(v, out.data[base:base+d])
	case "max":
		copy(v, out.data[base:base+d])
		for t := 1; t < length; t++ {
			tok := out.data[base+t*d : base+(t+1)*d]
			for k, x := range tok {
				if x > v[k] {
					v[k] = x
				}
			}
		}
	default: // mean over real tokens; accumulate in float64 like a careful reference would
		acc := make([]float64, d)
		for t := range length {
			tok := out.data[base+t*d : base+(t+1)*d]
			for k, x := range tok {
				acc[k] += float64(x)
			}
		}
		for k := range v {
			v[k] = float32(acc[k] / float64(length))
		}
	}
	return v
}

// normalize scales v to unit L2 length in place (a zero vector stays zero).
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}
