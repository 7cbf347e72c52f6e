package embed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEncode: one batch of 32 texts of about 150 tokens on the minilm-l6 shape (the
// shape of all-MiniLM-L6-v2), per backend. `go test -bench Encode -benchtime 3x ./embed/`.
// embed/bench/run.sh compares the ort backend with onnxruntime-node.
func BenchmarkEncode(b *testing.B) {
	texts := make([]string, 32)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("sentence %d about retrieval engines and their encoders. ", i), 16)
	}
	for _, backend := range []string{BackendORT, BackendGo} {
		b.Run(backend, func(b *testing.B) {
			requireORT(b)
			requireModel(b, synthetic("minilm-l6"))
			e, err := OpenEncoder(context.Background(), Options{ModelDir: synthetic("minilm-l6"), Backend: backend})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			encs, err := e.Tokenize(Passage, texts)
			if err != nil {
				b.Fatal(err)
			}
			tokens := 0
			for _, x := range encs {
				tokens += len(x.IDs)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.EncodeTokens(context.Background(), encs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
			b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkEncodeSciFact: the first 512 SciFact passages (title and abstract, truncated at
// the model's 256 tokens) on minilm-l6, batch 32, in the indexer's chunks of 256, tokenizing
// included. "sequential" is the loop before the pipeline (Encode chunk by chunk, each batch
// padded, run and pooled in turn); "pipelined" is EncodeChunks (the next chunk tokenized and
// the next batch padded while the model runs). Both give the same bytes (TestPipeline*).
// `go test -run '^$' -bench EncodeSciFact -benchtime 1x -count 3 ./embed/`; the library is
// $KAIROS_ORT_LIB, so the same benchmark compares ONNX Runtime versions.
func BenchmarkEncodeSciFact(b *testing.B) {
	requireORT(b)
	requireModel(b, synthetic("minilm-l6"))
	texts := scifactTexts(b, 512)
	chunks := [][]string{texts[:DefaultSortWindow], texts[DefaultSortWindow:]}
	e, err := OpenEncoder(context.Background(), Options{ModelDir: synthetic("minilm-l6"), Backend: BackendORT})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	b.Run("sequential", func(b *testing.B) {
		e.depth = 0
		for b.Loop() {
			for _, c := range chunks {
				if _, err := e.Encode(ctx, Passage, c); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "passages/s")
	})
	b.Run("pipelined", func(b *testing.B) {
		e.depth = pipelineDepth
		for b.Loop() {
			if err := e.EncodeChunks(ctx, Passage, chunks, func(int, [][]float32) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "passages/s")
	})
}

// BenchmarkStaticSciFact: passages/s of 120-word SciFact passages (title included, as the
// corpus package cuts them) on the static-model2vec fixture (256-d float16 with weights, the
// shape of potion-base-8M) and static-st (128-d), through the indexer's path (EncodeChunks in
// chunks of SortWindow) and kairos embed's (Tokenize, then EncodeTokens); minilm-l6 through
// ONNX Runtime on 64 of the same passages is the anchor of the same run.
// `GOMAXPROCS=2 go test -run '^$' -bench StaticSciFact -benchtime 3x ./embed/`.
// $KAIROS_BENCH_STATIC adds static model folders (comma-separated, named by their base name),
// such as a 1024-d fixture written by ../shared/models/gen_static.py, to the same run.
func BenchmarkStaticSciFact(b *testing.B) {
	texts := scifactPassages(b, 4096, 120)
	ctx := context.Background()
	dirs := []string{synthetic("static-model2vec"), synthetic("static-st")}
	if extra := os.Getenv("KAIROS_BENCH_STATIC"); extra != "" {
		dirs = append(dirs, strings.Split(extra, ",")...)
	}
	for _, dir := range dirs {
		model := filepath.Base(dir)
		e, err := OpenEncoder(ctx, Options{ModelDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		var chunks [][]string
		for i := 0; i < len(texts); i += e.SortWindow() {
			chunks = append(chunks, texts[i:min(len(texts), i+e.SortWindow())])
		}
		b.Run(model+"/index", func(b *testing.B) {
			for b.Loop() {
				if err := e.EncodeChunks(ctx, Passage, chunks, func(int, [][]float32) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "passages/s")
		})
		b.Run(model+"/tokenize+tokens", func(b *testing.B) {
			for b.Loop() {
				for _, c := range chunks {
					encs, err := e.Tokenize(Passage, c)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := e.EncodeTokens(ctx, encs); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "passages/s")
		})
	}
	b.Run("minilm-l6-ort", func(b *testing.B) {
		requireORT(b)
		requireModel(b, synthetic("minilm-l6"))
		e, err := OpenEncoder(ctx, Options{ModelDir: synthetic("minilm-l6"), Backend: BackendORT})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		for b.Loop() {
			if _, err := e.Encode(ctx, Passage, texts[:64]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "passages/s")
	})
}
