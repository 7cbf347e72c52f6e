package embed

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentEncode shares one encoder (one ORT session) between goroutines; run with -race.
func TestConcurrentEncode(t *testing.T) {
	e := openEnc(t, synthetic("tiny-encoder"), BackendORT)
	ctx := context.Background()
	texts := testTexts()
	want, err := e.Encode(ctx, Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine encodes a rotated slice so batches differ between goroutines.
			rot := append(append([]string{}, texts[g%len(texts):]...), texts[:g%len(texts)]...)
			got, err := e.Encode(ctx, Passage, rot)
			if err != nil {
				errs <- err
				return
			}
			for i := range rot {
				if c := cosine(got[i], want[(i+g)%len(texts)]); c < 0.99999 {
					errs <- errors.New("concurrent vector differs")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEncodeHonoursCancelledContext(t *testing.T) {
	for _, backend := range []string{BackendORT, BackendGo} {
		e := openEnc(t, synthetic("tiny-encoder"), backend)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := e.Encode(ctx, Passage, testTexts()); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", backend, err)
		}
	}
}

// TestAutoFallsBackToGo: with no loadable ONNX Runtime, auto uses the Go backend and says so.
func TestAutoFallsBackToGo(t *testing.T) {
	requireModel(t, synthetic("tiny-encoder"))
	var logs bytes.Buffer
	e, err := OpenEncoder(context.Background(), Options{
		ModelDir: synthetic("tiny-encoder"),
		ORTLib:   "/nonexistent/libonnxruntime.so",
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Info().Backend != BackendGo {
		t.Errorf("backend %q, want go", e.Info().Backend)
	}
	if !strings.Contains(logs.String(), "backend=go") || !strings.Contains(logs.String(), "ONNX Runtime unavailable") {
		t.Errorf("logs do not say which backend was picked:\n%s", logs.String())
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{}, "ModelDir is required"},
		{Options{ModelDir: "m", Backend: "cuda"}, "unknown backend"},
		{Options{ModelDir: "m", BatchSize: -1}, "BatchSize"},
		{Options{ModelDir: "m", Threads: -2}, "Threads"},
		{Options{ModelDir: "m", Backend: BackendGo, BatchSize: 8, Threads: 1}, ""},
	} {
		err := tc.o.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}
