package embed

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/kairos-rag/kairos/internal/modelid"
)

// TestBackendsAgree is the contract between the two backends: same model, same texts, same
// vectors (cosine >= 0.9999), texts beyond max_seq_length included.
func TestBackendsAgree(t *testing.T) {
	dir := synthetic("tiny-encoder")
	ortEnc := openEnc(t, dir, BackendORT)
	goEnc := openEnc(t, dir, BackendGo)
	if got := ortEnc.Info().Backend; got != BackendORT {
		t.Fatalf("ort encoder reports backend %q", got)
	}
	if got := goEnc.Info().Backend; got != BackendGo {
		t.Fatalf("go encoder reports backend %q", got)
	}
	texts := testTexts()
	ctx := context.Background()
	for _, kind := range []Kind{Query, Passage} {
		a, err := ortEnc.Encode(ctx, kind, texts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := goEnc.Encode(ctx, kind, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if len(a[i]) != 64 || len(b[i]) != 64 {
				t.Fatalf("text %d: dims %d and %d, want 64", i, len(a[i]), len(b[i]))
			}
			if c := cosine(a[i], b[i]); c < 0.9999 {
				t.Errorf("%v text %d (%.30q): cosine(ort, go) = %.6f < 0.9999", kind, i, texts[i], c)
			}
		}
	}
}

func TestEmptyTextIsAnError(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{BackendORT, BackendGo} {
		e := openEnc(t, synthetic("tiny-encoder"), backend)
		for _, bad := range []string{"", " ", "\t\n", "\u00a0\u2003"} {
			_, err := e.Encode(ctx, Passage, []string{"fine", bad})
			if !errors.Is(err, ErrEmptyText) {
				t.Errorf("%s: Encode(%q) error = %v, want ErrEmptyText", backend, bad, err)
			}
		}
	}
}

func TestInfoReadsFolderConfig(t *testing.T) {
	e := openEnc(t, synthetic("tiny-encoder"), BackendAuto)
	got := e.Info()
	if got.Backend != BackendORT {
		t.Errorf("auto picked %q with the library present, want ort", got.Backend)
	}
	want := ModelInfo{Identity: modelid.Identity{Name: "tiny-encoder", ONNXSHA256: got.ONNXSHA256, Dim: 64, Pooling: "mean", Normalize: true,
		MaxSeqLen: 256, ONNXFile: "model.onnx", Precision: PrecisionFP32, Dir: absDir(synthetic("tiny-encoder"))}, Output: "last_hidden_state", Backend: got.Backend}
	if got != want {
		t.Errorf("Info() = %+v\nwant %+v", got, want)
	}
	if len(got.ONNXSHA256) != 64 {
		t.Errorf("ONNXSHA256 = %q", got.ONNXSHA256)
	}
}

// TestBatchingKeepsOrderAndValues: encoding texts together (sorted, padded, batched) gives the
// same vectors, in input order, as encoding each alone.
func TestBatchingKeepsOrderAndValues(t *testing.T) {
	e := openEnc(t, synthetic("tiny-encoder"), BackendORT)
	ctx := context.Background()
	texts := testTexts()
	all, err := e.Encode(ctx, Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, txt := range texts {
		one, err := e.Encode(ctx, Passage, []string{txt})
		if err != nil {
			t.Fatal(err)
		}
		if c := cosine(all[i], one[0]); c < 0.99999 {
			t.Errorf("text %d: batched vs alone cosine %.7f", i, c)
		}
		var n float64
		for _, x := range all[i] {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: squared norm %.7f, want 1", i, n)
		}
	}
}

func TestCrossEncoderBackendsAgree(t *testing.T) {
	requireORT(t)
	dir := synthetic("tiny-cross-encoder")
	requireModel(t, dir)
	ctx := context.Background()
	var scores [2][]float32
	for k, backend := range []string{BackendORT, BackendGo} {
		c, err := OpenCrossEncoder(ctx, Options{ModelDir: dir, Backend: backend, BatchSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.Info().Backend != backend || c.Info().Output != "logits" || c.Info().MaxSeqLen != 512 {
			t.Errorf("Info() = %+v", c.Info())
		}
		scores[k], err = c.Score(ctx, "what does truncation do to long passages?", testTexts())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Score(ctx, " ", []string{"x"}); !errors.Is(err, ErrEmptyText) {
			t.Errorf("%s: blank query error = %v", backend, err)
		}
		if _, err := c.Score(ctx, "q", []string{"x", ""}); !errors.Is(err, ErrEmptyText) {
			t.Errorf("%s: blank passage error = %v", backend, err)
		}
	}
	distinct := map[float32]bool{}
	for i := range scores[0] {
		a, b := float64(scores[0][i]), float64(scores[1][i])
		if math.Abs(a-b) > 1e-3*math.Max(1, math.Abs(a)) {
			t.Errorf("pair %d: ort %.6f vs go %.6f", i, a, b)
		}
		distinct[scores[0][i]] = true
	}
	if len(distinct) < len(scores[0])-1 {
		t.Errorf("scores barely vary (%v): is the passage reaching the model?", scores[0])
	}
}
