package multistream

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// IndexPath returns the path of the index file Wikipedia publishes beside a multistream dump
// ("enwiki-...-pages-articles-multistream.xml.bz2" -> "enwiki-...-pages-articles-multistream-
// index.txt.bz2"), or "" when path is not named like a multistream dump.
func IndexPath(path string) string {
	base, ok := strings.CutSuffix(path, "multistream.xml.bz2")
	if !ok {
		return ""
	}
	return base + "multistream-index.txt.bz2"
}

// ReadIndex reads a multistream dump's index file, bzip2-compressed or plain: one
// "offset:pageid:title" line per page, where offset is the byte offset in the dump of the
// stream that holds the page. It returns the distinct offsets, ascending. A line that does
// not start with a number, or an offset smaller than the one before it, is an error naming
// the file and the line.
func ReadIndex(ctx context.Context, path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var text io.Reader = br
	if head, _ := br.Peek(4); isStreamHeader(head) {
		zr, err := NewReader(ctx, br, Options{File: path})
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		text = zr
	}
	return parseIndex(ctx, text, path)
}

func parseIndex(ctx context.Context, r io.Reader, path string) ([]int64, error) {
	var offsets []int64
	lr := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := lr.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a very long title: only the offset matters
			b = bytes.Clone(b[:64]) // the offset, before reading the rest over the buffer
			for err == bufio.ErrBufferFull {
				_, err = lr.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
			}
			err = nil
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			num, _, _ := bytes.Cut(t, []byte(":"))
			off, perr := strconv.ParseInt(string(num), 10, 64)
			if perr != nil || off < 0 {
				return nil, fmt.Errorf("%s: line %d: %q does not start with a byte offset", path, line, trim(t))
			}
			switch n := len(offsets); {
			case n > 0 && off < offsets[n-1]:
				return nil, fmt.Errorf("%s: line %d: offset %d is before the previous one (%d)", path, line, off, offsets[n-1])
			case n == 0 || off > offsets[n-1]:
				offsets = append(offsets, off)
			}
		}
		if err == io.EOF {
			break
		}
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if len(offsets) == 0 {
		return nil, fmt.Errorf("%s: no offsets: not a multistream index", path)
	}
	return offsets, nil
}

func trim(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
