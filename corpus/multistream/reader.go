package multistream

import (
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/internal/ordered"
)

// Defaults of Options.
const (
	DefaultMaxStreamBytes  = 32 << 20
	DefaultMaxDecodedBytes = 1 << 30
	DefaultMaxPooledBytes  = 32 << 20
)

// Options configures a Reader. The zero value scans for stream starts and uses every core.
type Options struct {
	File string // names the input in errors
	// Offsets are the file offsets of stream starts, ascending, as ReadIndex returns them
	// from a dump's index file. nil scans the input for stream starts instead.
	Offsets []int64
	// Workers is how many streams are decompressed at once; 0 means GOMAXPROCS.
	Workers int
	// MaxStreamBytes is the most compressed input held while looking for the next stream
	// start; past it, the rest of the input is decompressed sequentially. 0 means
	// DefaultMaxStreamBytes (32 MiB; Wikipedia's streams are well under 1 MiB).
	MaxStreamBytes int64
	// MaxDecodedBytes caps the text of one segment of the input, so that a crafted stream
	// cannot exhaust memory; a bigger one is an error naming its offset. 0 means
	// DefaultMaxDecodedBytes (1 GiB).
	MaxDecodedBytes int64
	// MaxPooledBytes caps the text of one segment that the pool's goroutines hold: a
	// bigger one is decompressed again by Read, alone, up to MaxDecodedBytes. The segments
	// decompressed ahead of their turn (two a worker) then hold at most that many bytes
	// each, where a few tiny crafted streams of a GiB each would otherwise hold tens of GiB.
	// 0 means DefaultMaxPooledBytes (32 MiB; Wikipedia's segments hold a few MiB).
	MaxPooledBytes int64
	// Clock, when set, gets the decompression's busy time summed over the goroutines that
	// decompress, one item per stream and the bytes of text.
	Clock *document.StageClock
}

// Validate reports negative sizes.
func (o Options) Validate() error {
	switch {
	case o.Workers < 0:
		return fmt.Errorf("options: Workers is negative (%d)", o.Workers)
	case o.MaxStreamBytes < 0:
		return fmt.Errorf("options: MaxStreamBytes is negative (%d)", o.MaxStreamBytes)
	case o.MaxDecodedBytes < 0:
		return fmt.Errorf("options: MaxDecodedBytes is negative (%d)", o.MaxDecodedBytes)
	case o.MaxPooledBytes < 0:
		return fmt.Errorf("options: MaxPooledBytes is negative (%d)", o.MaxPooledBytes)
	}
	for i := 1; i < len(o.Offsets); i++ {
		if o.Offsets[i] < o.Offsets[i-1] {
			return fmt.Errorf("options: Offsets are not ascending (%d after %d)", o.Offsets[i], o.Offsets[i-1])
		}
	}
	return nil
}

// Reader is the decompressed text of a bzip2 input. It is not safe for concurrent use.
type Reader struct {
	file       string
	maxDecoded int64
	maxPooled  int64
	clock      *document.StageClock
	pipe       *ordered.Pipeline[segment, piece]
	ctx        context.Context
	cancel     context.CancelFunc
	cur        []byte
	tail       *readAhead // set once the input went sequential
	err        error      // sticky
	stats      Stats
}

// piece is the text of one segment, or why it failed to decompress.
type piece struct {
	seg  segment
	text []byte
	err  error
}

// Stats says how a Reader decompressed its input.
type Stats struct {
	Streams    int  // segments decompressed by the pool
	Merged     int  // false stream starts: segments decompressed joined with the next one
	Oversized  int  // segments over MaxPooledBytes, decompressed again by Read
	Sequential bool // the input (or its rest) was decompressed sequentially
}

// NewReader starts decompressing r, the raw bytes of a bzip2 file (plain or multistream), on
// opts.Workers goroutines. Read returns the text in input order. Close stops the goroutines;
// it does not close r. Errors name opts.File and the byte offset of the stream at fault.
func NewReader(ctx context.Context, r io.Reader, opts Options) (*Reader, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	maxStream := int(opts.MaxStreamBytes)
	if maxStream == 0 {
		maxStream = DefaultMaxStreamBytes
	}
	s := &splitter{r: r, file: opts.File, offsets: opts.Offsets, indexed: opts.Offsets != nil, max: maxStream}
	return newReader(ctx, s.next, opts), nil
}

// newReader decompresses the segments next returns.
func newReader(ctx context.Context, next func() (segment, error), opts Options) *Reader {
	mr := &Reader{file: opts.File, maxDecoded: opts.MaxDecodedBytes, maxPooled: opts.MaxPooledBytes, clock: opts.Clock}
	if mr.maxDecoded == 0 {
		mr.maxDecoded = DefaultMaxDecodedBytes
	}
	if mr.maxPooled == 0 {
		mr.maxPooled = DefaultMaxPooledBytes
	}
	mr.maxPooled = min(mr.maxPooled, mr.maxDecoded)
	mr.ctx, mr.cancel = context.WithCancel(ctx)
	mr.pipe = ordered.Start(mr.ctx, opts.Workers, next, func(seg segment) (piece, error) {
		if seg.tail != nil {
			return piece{seg: seg}, nil // decompressed by Read's read-ahead, in order
		}
		return mr.decode(seg, mr.maxPooled), nil
	})
	return mr
}

// errOverPooled is a segment's error when its text is over MaxPooledBytes and under
// MaxDecodedBytes may be left: Read decompresses it again.
var errOverPooled = errors.New("over MaxPooledBytes")

// decode decompresses one segment, up to limit bytes of text (MaxPooledBytes or
// MaxDecodedBytes).
func (r *Reader) decode(seg segment, limit int64) piece {
	start := time.Now()
	var out bytes.Buffer
	out.Grow(int(min(5*int64(len(seg.data)), limit+1))) // Wikipedia's XML compresses about 4:1
	n, err := io.Copy(&out, io.LimitReader(bzip2.NewReader(bytes.NewReader(seg.data)), limit+1))
	switch {
	case err == nil && n > limit && limit < r.maxDecoded:
		err = errOverPooled
	case err == nil && n > limit:
		err = fmt.Errorf("more than %d bytes of text (MaxDecodedBytes)", r.maxDecoded)
	}
	if err == errOverPooled {
		r.clock.Add(time.Since(start), 0, 0) // the stream and its text count when decoded again
	} else {
		r.clock.Add(time.Since(start), 1, n)
	}
	return piece{seg: seg, text: out.Bytes(), err: err}
}

// Stats says how the input has been decompressed so far.
func (r *Reader) Stats() Stats { return r.stats }

// Read reads decompressed text.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.tail != nil {
			r.cur, r.err = r.tail.next()
			continue
		}
		pc, err := r.pipe.Next(r.ctx)
		if err != nil {
			r.err = err
			continue
		}
		if pc.seg.tail != nil {
			r.stats.Sequential = true
			r.tail = startReadAhead(r.ctx, r.file, pc.seg, r.clock)
			continue
		}
		r.stats.Streams++
		if errors.Is(pc.err, errOverPooled) {
			r.stats.Oversized++
			pc = r.decode(pc.seg, r.maxDecoded)
		}
		if pc.err != nil {
			pc = r.repair(pc)
		}
		if pc.err != nil {
			r.err = fmt.Errorf("%s: bzip2 stream at byte %d: %w", r.file, pc.seg.off, pc.err)
			continue
		}
		r.cur = pc.text
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// repair handles a segment that ended inside a stream: its end was a false stream start (or
// the file is truncated). It decodes the segment joined with the following ones until the
// stream ends, and returns the last error when there is nothing left to join.
func (r *Reader) repair(pc piece) piece {
	for pc.err != nil && errors.Is(pc.err, io.ErrUnexpectedEOF) {
		nx, err := r.pipe.Next(r.ctx)
		if err != nil || nx.seg.tail != nil {
			if err != nil && err != io.EOF {
				pc.err = err
			} else {
				pc.err = fmt.Errorf("truncated input: %w", pc.err)
			}
			if nx.seg.tail != nil {
				pc.err = fmt.Errorf("a stream runs into input too big to hold (MaxStreamBytes): %w", pc.err)
			}
			return pc
		}
		r.stats.Merged++
		joined := append(pc.seg.data[:len(pc.seg.data):len(pc.seg.data)], nx.seg.data...)
		pc = r.decode(segment{data: joined, off: pc.seg.off}, r.maxDecoded)
	}
	return pc
}

// Close stops the decompression goroutines; later Reads fail.
func (r *Reader) Close() error {
	r.cancel()
	r.pipe.Close()
	if r.err == nil {
		r.err = errors.New("multistream reader closed")
	}
	return nil
}
