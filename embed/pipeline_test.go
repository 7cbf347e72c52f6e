package embed

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// scifactTexts returns the first n SciFact passages (title and abstract).
func scifactTexts(t testing.TB, n int) []string {
	t.Helper()
	f, err := os.Open(sharedtest.Path(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []string
	for sc.Scan() && len(out) < n {
		var r struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Title+". "+r.Text)
	}
	if len(out) < n {
		t.Fatalf("SciFact has %d passages, want %d (%v)", len(out), n, sc.Err())
	}
	return out
}

// The pipelined batch loop gives byte-identical vectors to the sequential one, in input order,
// for batch sizes that do and do not divide the input.
func TestPipelineMatchesSequential(t *testing.T) {
	e := openEnc(t, synthetic("tiny-encoder"), BackendORT)
	texts := append(testTexts(), scifactTexts(t, 150)...)
	encs, err := e.Tokenize(Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{7, 32, 500} {
		e.batchSize = batch
		e.depth = 0
		want, err := e.EncodeTokens(context.Background(), encs)
		if err != nil {
			t.Fatal(err)
		}
		for _, depth := range []int{1, pipelineDepth} {
			for _, inFlight := range []int{1, 3} { // several model calls at once (--in-flight)
				e.depth, e.inFlight = depth, inFlight
				got, err := e.EncodeTokens(context.Background(), encs)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if !slices.Equal(got[i], want[i]) {
						t.Fatalf("batch %d depth %d in flight %d: text %d differs from the sequential vector", batch, depth, inFlight, i)
					}
				}
			}
		}
	}
}

// stubRunner returns, for each row, [first token id, row length] as a pooled [n, 2] output;
// it fails or panics at batch failAt (counting from 1).
type stubRunner struct {
	calls  int
	failAt int
	panics bool
}

func (s *stubRunner) run(ctx context.Context, in *batchInput) (batchOutput, error) {
	s.calls++
	if s.calls == s.failAt {
		if s.panics {
			panic("stub exploded")
		}
		return batchOutput{}, errors.New("stub failed")
	}
	out := batchOutput{shape: []int{in.n, 2}}
	for r := range in.n {
		out.data = append(out.data, float32(in.ids[r*in.seq]), float32(in.lens[r]))
	}
	return out, ctx.Err()
}
func (s *stubRunner) backend() string { return "stub" }
func (s *stubRunner) close() error    { return nil }

func stubEncodings(n int) []Encoding {
	encs := make([]Encoding, n)
	for i := range encs {
		l := 1 + (i*7919)%23 // lengths in no order
		encs[i] = Encoding{IDs: make([]int64, l), TypeIDs: make([]int64, l)}
		encs[i].IDs[0] = int64(i)
	}
	return encs
}

// Every input gets its own row back in input order, and the first failure (the model's, a
// panic, or emit's) stops the pipeline with that error.
func TestPipelineOrderAndErrors(t *testing.T) {
	encs := stubEncodings(100)
	tests := []struct {
		name      string
		runner    *stubRunner
		emitFail  int // fail emit at this input index; -1 never
		wantErr   string
		wantCalls int // at most this many model calls
	}{
		{"all rows", &stubRunner{}, -1, "", 13},
		{"model error", &stubRunner{failAt: 3}, -1, "running batch of 8 texts", 3},
		{"panic", &stubRunner{failAt: 2, panics: true}, -1, "running the model: panic: stub exploded", 2},
		{"emit error", &stubRunner{}, 42, "emit refused 42", 13},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &core{run: tc.runner, batchSize: 8, depth: pipelineDepth}
			got := make([]int, len(encs))
			err := c.forEachBatch(context.Background(), encs, func(idx int, out *batchOutput, r, length int) error {
				if idx == tc.emitFail {
					return errors.New("emit refused 42")
				}
				if int(out.data[2*r+1]) != length || length != len(encs[idx].IDs) {
					t.Errorf("input %d: row length %v, want %d", idx, out.data[2*r+1], len(encs[idx].IDs))
				}
				got[idx] = int(out.data[2*r])
				return nil
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				for i, g := range got {
					if g != i {
						t.Fatalf("input %d got the row of input %d", i, g)
					}
				}
			}
			if tc.runner.calls > tc.wantCalls {
				t.Errorf("%d model calls, want at most %d", tc.runner.calls, tc.wantCalls)
			}
		})
	}
}

// A cancelled context stops the pipeline with the context's error.
func TestPipelineCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &core{run: &stubRunner{}, batchSize: 8, depth: pipelineDepth}
	err := c.forEachBatch(ctx, stubEncodings(50), func(int, *batchOutput, int, int) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// EncodeChunks, sequential (the CPU) or tokenizing ahead (CUDA), gives each chunk the vectors Encode gives it (byte-identical), in chunk order;
// an empty text names its chunk, and an error from each stops the run.
func TestEncodeChunksMatchesEncode(t *testing.T) {
	e := openEnc(t, synthetic("tiny-encoder"), BackendORT)
	for _, depth := range []int{0, pipelineDepth} {
		t.Run(fmt.Sprintf("depth %d", depth), func(t *testing.T) {
			e.depth = depth
			testEncodeChunks(t, e)
		})
	}
}

func testEncodeChunks(t *testing.T, e *Encoder) {
	ctx := context.Background()
	all := append(testTexts(), scifactTexts(t, 40)...)
	chunks := [][]string{all[:20], all[20:21], all[21:]}
	var got [][][]float32
	err := e.EncodeChunks(ctx, Passage, chunks, func(i int, v [][]float32) error {
		if i != len(got) {
			t.Errorf("chunk %d handed over at position %d", i, len(got))
		}
		got = append(got, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chunks {
		want, err := e.Encode(ctx, Passage, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(got[i]) != len(want) {
			t.Fatalf("chunk %d: %d vectors, want %d", i, len(got[i]), len(want))
		}
		for j := range want {
			if !slices.Equal(got[i][j], want[j]) {
				t.Fatalf("chunk %d text %d differs from Encode", i, j)
			}
		}
	}
	tests := []struct {
		name    string
		chunks  [][]string
		failAt  int
		wantErr string
		wantN   int // chunks handed over before the error
	}{
		{"empty text", [][]string{{"a b"}, {"ok", " "}, {"never"}}, -1, "chunk 1: text 1: " + ErrEmptyText.Error(), 1},
		{"each fails", [][]string{{"a"}, {"b"}, {"c"}}, 1, "stop at 1", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := e.EncodeChunks(ctx, Passage, tc.chunks, func(i int, _ [][]float32) error {
				n++
				if i == tc.failAt {
					return errors.New("stop at 1")
				}
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || n != tc.wantN {
				t.Errorf("error %v after %d chunks, want %q after %d", err, n, tc.wantErr, tc.wantN)
			}
		})
	}
}

// The batch and the sort window follow the device: the CPU keeps 32 and 256 (the vectors of
// earlier releases), a GPU gets 256 and eight batches (--sort-batches).
func TestDeviceBatchDefaults(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		wantBatch  int
		wantWindow int
	}{
		{"cpu", Options{}, DefaultBatchSize, DefaultSortWindow},
		{"cpu, batch 64", Options{BatchSize: 64}, 64, DefaultSortWindow},
		{"cuda", Options{Device: Device{CUDA: true}}, DefaultCUDABatchSize, 8 * DefaultCUDABatchSize},
		{"cuda, batch 16", Options{Device: Device{CUDA: true, ID: 1}, BatchSize: 16}, 16, DefaultSortWindow},
		{"cuda, batch 1024", Options{Device: Device{CUDA: true}, BatchSize: 1024}, 1024, 8192},
		{"cuda, 32 batches", Options{Device: Device{CUDA: true}, SortBatches: 32}, DefaultCUDABatchSize, 32 * DefaultCUDABatchSize},
		{"cpu ignores sort batches", Options{SortBatches: 32}, DefaultBatchSize, DefaultSortWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.SetDefaults()
			e := &Encoder{core: core{batchSize: o.BatchSize}, cuda: o.Device.CUDA, sortBatches: o.SortBatches}
			if e.BatchSize() != tc.wantBatch || e.SortWindow() != tc.wantWindow {
				t.Errorf("batch %d window %d, want %d %d", e.BatchSize(), e.SortWindow(), tc.wantBatch, tc.wantWindow)
			}
		})
	}
}
