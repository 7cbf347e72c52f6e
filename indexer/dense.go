package indexer

import (
	"context"
	"fmt"

	"github.com/kairos-rag/kairos/internal/modelid"
)

// ModelIdentity identifies a sentence encoder; the manifest records it (see internal/modelid).
type ModelIdentity = modelid.Identity

// PassageEncoder embeds passages at build time. The indexer declares it so that it needs no
// ONNX code; cmd adapts embed's encoder to it.
type PassageEncoder interface {
	Identity() ModelIdentity
	// EncodePassages returns one vector of Identity().Dim per text, in order.
	EncodePassages(ctx context.Context, texts []string) ([][]float32, error)
}

// ChunkPassageEncoder is a PassageEncoder that pipelines a run of chunks: it prepares chunk
// i+1 (tokenizing it) while its model runs chunk i, so a fast device is not left waiting
// between chunks. each receives chunk i's vectors, in order; they must equal what
// EncodePassages returns for that chunk. The indexer uses it when its encoder has it.
type ChunkPassageEncoder interface {
	PassageEncoder
	EncodePassageChunks(ctx context.Context, chunks [][]string, each func(i int, vecs [][]float32) error) error
	// ChunkSize is how many passages a chunk should hold (0: the indexer's default,
	// encodeChunk). A GPU wants more than a CPU: see embed.Encoder.SortWindow.
	ChunkSize() int
}

// embedJob is a batch of passages, keyed, waiting for vectors.
type embedJob struct {
	keys  []uint32
	texts []string
	src   []uint32 // compaction: the keys whose stored vectors to reuse
}

// encodeChunk is how many passages the embedding stage hands the encoder at a time: large
// enough for its length grouping to pay, small enough that progress moves every few seconds
// on a CPU (a whole index batch is thousands of passages, minutes of CPU work).
const encodeChunk = 256

// encode embeds texts chunk by chunk, counting each chunk in the progress as it is done.
func (w *genWriter) encode(ctx context.Context, texts []string) ([][]float32, error) {
	vecs := make([][]float32, 0, len(texts))
	if ce, ok := w.opts.Encoder.(ChunkPassageEncoder); ok {
		size := ce.ChunkSize()
		if size <= 0 {
			size = encodeChunk
		}
		var chunks [][]string
		for start := 0; start < len(texts); start += size {
			chunks = append(chunks, texts[start:min(start+size, len(texts))])
		}
		err := ce.EncodePassageChunks(ctx, chunks, func(i int, v [][]float32) error {
			if len(v) != len(chunks[i]) {
				return fmt.Errorf("encoder returned %d vectors for a chunk of %d passages", len(v), len(chunks[i]))
			}
			vecs = append(vecs, v...)
			w.prog.passagesEmbedded(len(v))
			return nil
		})
		if err != nil {
			return nil, err
		}
		return vecs, nil
	}
	for start := 0; start < len(texts); start += encodeChunk {
		chunk := texts[start:min(start+encodeChunk, len(texts))]
		v, err := w.opts.Encoder.EncodePassages(ctx, chunk)
		if err != nil {
			return nil, err
		}
		vecs = append(vecs, v...)
		w.prog.passagesEmbedded(len(chunk))
	}
	return vecs, nil
}
