package embed

import (
	"context"
	"fmt"
)

// EncodeChunks encodes chunks of texts in order and hands each chunk's vectors to each. On a
// pipelined device (CUDA, see depthFor), chunk i+1 is tokenized on other goroutines (Tokenize
// spreads a chunk over up to GOMAXPROCS workers) while the model runs chunk i, so the GPU does
// not wait for the tokenizer between chunks; on the CPU the chunks run one after another.
// Each chunk is length-sorted and batched on its own, exactly as Encode does it, so the
// vectors are byte-identical to calling Encode chunk by chunk. The first error (an empty text,
// the model, ctx, or each) stops the work and is returned.
func (e *Encoder) EncodeChunks(ctx context.Context, kind Kind, chunks [][]string, each func(i int, vecs [][]float32) error) error {
	if _, err := e.prefix(kind); err != nil {
		return err
	}
	if e.depth <= 0 {
		for i, texts := range chunks {
			vecs, err := e.Encode(ctx, kind, texts)
			if err != nil {
				return fmt.Errorf("chunk %d: %w", i, err)
			}
			if err := each(i, vecs); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ahead := make(chan tokenizedChunk, 1) // one chunk tokenized ahead of the model
	go func() {
		defer close(ahead)
		for _, texts := range chunks {
			t := tokenizeChunk(e, kind, texts)
			select {
			case ahead <- t:
			case <-ctx.Done():
				return
			}
			if t.err != nil {
				return
			}
		}
	}()
	i := 0
	for t := range ahead {
		if t.err != nil {
			return fmt.Errorf("chunk %d: %w", i, t.err)
		}
		vecs, err := e.EncodeTokens(ctx, t.encs)
		if err != nil {
			return fmt.Errorf("chunk %d: %w", i, err)
		}
		if err := each(i, vecs); err != nil {
			return err
		}
		i++
	}
	return ctx.Err()
}

// tokenizedChunk is one chunk's model inputs, or why it has none.
type tokenizedChunk struct {
	encs []Encoding
	err  error
}

// tokenizeChunk tokenizes one chunk, turning a tokenizer panic into the chunk's error.
func tokenizeChunk(e *Encoder, kind Kind, texts []string) (t tokenizedChunk) {
	defer func() {
		if r := recover(); r != nil {
			t.err = fmt.Errorf("tokenizing: panic: %v", r)
		}
	}()
	t.encs, t.err = e.Tokenize(kind, texts)
	return t
}
