package corpus

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/corpus/multistream"
)

// decompress returns the decompressed stream of r, trusting the magic bytes over the name.
// bzip2 is decompressed on opts.Workers goroutines when the input is multistream (package
// multistream); a single-stream bzip2 file is decompressed sequentially, beside the parsing.
func decompress(ctx context.Context, r io.Reader, path string, opts Options) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(6)
	clock := opts.Stages.decompress()
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		return timed(zr, clock), nil
	case bytes.HasPrefix(magic, []byte("BZh")):
		if opts.workers() == 1 {
			return timed(bzip2.NewReader(br), clock), nil
		}
		mo := multistream.Options{File: path, Workers: opts.workers(), Clock: clock}
		if index := cmp.Or(opts.MultistreamIndex, existing(multistream.IndexPath(path))); index != "" {
			offsets, err := multistream.ReadIndex(ctx, index)
			if err != nil {
				return nil, fmt.Errorf("%s: reading its multistream index: %w", path, err)
			}
			mo.Offsets = offsets
		}
		return multistream.NewReader(ctx, br, mo)
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return nil, fmt.Errorf("%s: xz compression is not supported; decompress it first", path)
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return nil, fmt.Errorf("%s: zstd compression is not supported; decompress it first", path)
	case ext == ".gz" || ext == ".tgz":
		return nil, fmt.Errorf("%s: named %s but not gzip data", path, ext)
	case ext == ".bz2":
		return nil, fmt.Errorf("%s: named .bz2 but not bzip2 data", path)
	}
	return br, nil
}

// timed is r with its reads timed on clock, when there is one. The reader's Close, if any, is
// kept: a gzip reader is closed with the input.
func timed(r io.Reader, clock *StageClock) io.Reader {
	if clock == nil {
		return r
	}
	tr := &document.TimedReader{R: r, Clock: clock}
	if c, ok := r.(io.Closer); ok {
		return struct {
			io.Reader
			io.Closer
		}{tr, c}
	}
	return tr
}

// workers returns o.Workers or its default, GOMAXPROCS.
func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// existing returns path when it names a file, else "".
func existing(path string) string {
	if path == "" {
		return ""
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return path
}
