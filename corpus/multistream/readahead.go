package multistream

import (
	"compress/bzip2"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kairos-rag/kairos/corpus/document"
)

// readAhead decompresses a tail of the input on a goroutine of its own, so that a
// single-stream file is decompressed beside the caller's parsing rather than inside it.
type readAhead struct {
	ctx    context.Context
	blocks chan []byte
	err    error // set before blocks is closed
}

const readAheadBlock = 1 << 18

func startReadAhead(ctx context.Context, file string, seg segment, clock *document.StageClock) *readAhead {
	ra := &readAhead{ctx: ctx, blocks: make(chan []byte, 8)}
	go func() {
		defer close(ra.blocks)
		raw := &document.CountingReader{R: seg.tail}
		zr := bzip2.NewReader(raw)
		for {
			b := make([]byte, readAheadBlock)
			start := time.Now()
			n, err := fillFrom(zr, b)
			clock.Add(time.Since(start), 0, int64(n))
			if n > 0 {
				select {
				case ra.blocks <- b[:n]:
				case <-ctx.Done():
					ra.err = ctx.Err()
					return
				}
			}
			if err == io.EOF {
				ra.err = io.EOF
				return
			}
			if err != nil {
				ra.err = fmt.Errorf("%s: bzip2 data before byte %d: %w", file, seg.off+raw.Count(), err)
				return
			}
		}
	}()
	return ra
}

// next returns the next block of text, or the error (io.EOF at the end).
func (ra *readAhead) next() ([]byte, error) {
	select {
	case b, ok := <-ra.blocks:
		if ok {
			return b, nil
		}
		return nil, ra.err
	case <-ra.ctx.Done():
		return nil, ra.ctx.Err()
	}
}

// fillFrom reads into b until it is full or r fails; unlike io.ReadFull it returns r's error
// as is, so that a truncated stream (io.ErrUnexpectedEOF from bzip2) is not taken for the end.
func fillFrom(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
