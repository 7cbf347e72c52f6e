package scalebench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kairos-rag/kairos/corpus/multistream"
	"github.com/kairos-rag/kairos/corpus/synthcorpus"
	"github.com/kairos-rag/kairos/internal/tty"
)

// WriteSyntheticDump writes n synthetic passages following model, seeded, as the articles of
// a Wikipedia multistream dump (wikitext in MediaWiki's XML export, 100 pages a bzip2 stream,
// with its index file beside it), so that the dump path of kairos index can be measured at
// any size; log gets the progress lines (nil: none).
func WriteSyntheticDump(ctx context.Context, path string, model *synthcorpus.Model, n int, seed uint64, log io.Writer) error {
	prog := newProgress(log, tty.Is(log))
	pr, pw := io.Pipe()
	start := time.Now()
	generated := make(chan struct{})
	// The articles are generated on a goroutine of their own, beside the compression, which
	// is the slower half.
	go func() {
		defer close(generated)
		_, err := synthcorpus.GenerateMediaWiki(ctx, pw, model, synthcorpus.Options{Passages: n, Seed: seed, Progress: func(done int) {
			prog.report("generating: %d/%d passages (%.0f/s)", done, n, float64(done)/time.Since(start).Seconds())
		}})
		pw.CloseWithError(err)
	}()
	err := multistream.Create(ctx, path, pr, multistream.WriteOptions{})
	pr.CloseWithError(io.ErrClosedPipe) // stops the generator if Create failed early
	<-generated
	prog.done()
	if err != nil {
		return fmt.Errorf("generating %s: %w", path, err)
	}
	return nil
}
