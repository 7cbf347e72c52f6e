package indexer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// chunkEncoder is countingEncoder with EncodePassageChunks; it records the chunk sizes it saw
// and can fail at one chunk.
type chunkEncoder struct {
	countingEncoder
	sizes  []int
	failAt int // chunk index to fail; -1 never
	short  bool
	chunk  int // ChunkSize
}

func (e *chunkEncoder) ChunkSize() int { return e.chunk }

func (e *chunkEncoder) EncodePassageChunks(ctx context.Context, chunks [][]string, each func(int, [][]float32) error) error {
	for i, c := range chunks {
		e.sizes = append(e.sizes, len(c))
		if i == e.failAt {
			return fmt.Errorf("chunk %d: model failed", i)
		}
		v, err := e.EncodePassages(ctx, c)
		if err != nil {
			return err
		}
		if e.short {
			v = v[1:]
		}
		if err := each(i, v); err != nil {
			return err
		}
	}
	return nil
}

// The embedding stage hands a chunk encoder the same chunks it hands EncodePassages one at a
// time, and gets the same vectors back in order; a failure or a short chunk is an error.
func TestEncodeUsesChunkEncoder(t *testing.T) {
	texts := make([]string, 2*encodeChunk+17)
	for i := range texts {
		texts[i] = fmt.Sprintf("passage %d about topic %d", i, i%13)
	}
	plain := &countingEncoder{dim: 16}
	want, err := (&genWriter{opts: &Options{Encoder: plain}, prog: &progress{}}).encode(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		enc       *chunkEncoder
		wantSizes []int
		wantErr   string
	}{
		{"same vectors", &chunkEncoder{countingEncoder: countingEncoder{dim: 16}, failAt: -1}, []int{encodeChunk, encodeChunk, 17}, ""},
		{"encoder's chunk size", &chunkEncoder{countingEncoder: countingEncoder{dim: 16}, failAt: -1, chunk: 300}, []int{300, 229}, ""},
		{"failure", &chunkEncoder{countingEncoder: countingEncoder{dim: 16}, failAt: 1}, nil, "chunk 1: model failed"},
		{"short chunk", &chunkEncoder{countingEncoder: countingEncoder{dim: 16}, failAt: -1, short: true}, nil, "encoder returned 255 vectors for a chunk of 256 passages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prog := &progress{}
			got, err := (&genWriter{opts: &Options{Encoder: tc.enc}, prog: prog}).encode(context.Background(), texts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tc.enc.sizes, tc.wantSizes) {
				t.Errorf("chunk sizes %v", tc.enc.sizes)
			}
			if len(got) != len(want) || prog.embedded.Load() != int64(len(texts)) {
				t.Fatalf("%d vectors, %d counted, want %d", len(got), prog.embedded.Load(), len(want))
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("vector %d differs from EncodePassages'", i)
				}
			}
		})
	}
}
