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

// forEachBatch runs the model over encs in length order and calls emit for every input with its
// index and the batch output row it owns.
func (c *core) forEachBatch(ctx context.Context, encs []Encoding, emit func(idx int, out *batchOutput, row int, length int) error) error {
	order := lengthOrder(encs)
	batch := make([]Encoding, 0, c.batchSize)
	for start := 0; start < len(order); start += c.batchSize {
		end := min(start+c.batchSize, len(order))
		batch = batch[:0]
		for _, idx := range order[start:end] {
			batch = append(batch, encs[idx])
		}
		in := pad(batch)
		out, err := c.run.run(ctx, in)
		if err != nil {
			return fmt.Errorf("running batch of %d texts x %d tokens: %w", in.n, in.seq, err)
		}
		if len(out.shape) == 0 || out.shape[0] != in.n {
			return fmt.Errorf("model output shape %v for a batch of %d", out.shape, in.n)
		}
		for r, idx := range order[start:end] {
			if err := emit(idx, &out, r, in.lens[r]); err != nil {
				return err
			}
		}
	}
	return nil
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
