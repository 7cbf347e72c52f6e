package multistream

import (
	"bytes"
	"fmt"
	"io"
	"slices"
)

// streamMagic follows "BZh" and a level digit at the start of every non-empty stream: the
// magic of its first block (the BCD digits of pi).
var streamMagic = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}

// readSize is how much compressed input the splitter reads at a time.
const readSize = 1 << 20

// segment is a run of compressed input that starts at a stream start: one stream or more
// (several when a start was missed: an empty stream, a gap in the index). A tail segment is
// the rest of the input, to be decompressed sequentially.
type segment struct {
	data []byte
	off  int64     // file offset of data[0]
	tail io.Reader // instead of data: the rest of the input
}

// splitter cuts the compressed input into segments, at the offsets of an index or where a
// scan finds a stream start.
type splitter struct {
	r        io.Reader
	file     string
	buf      []byte // input read, not yet handed out; buf[0] starts a stream
	off      int64  // file offset of buf[0]
	scanFrom int    // the scan resumes here in buf
	eof      bool
	done     bool    // a tail was handed out: the input belongs to it now
	offsets  []int64 // index offsets still ahead; nil: scan
	indexed  bool
	max      int
}

// next returns the next segment, or io.EOF.
func (s *splitter) next() (segment, error) {
	if s.done {
		return segment{}, io.EOF
	}
	for {
		k, err := s.boundary()
		if err != nil {
			return segment{}, err
		}
		if k > 0 {
			return s.cut(k), nil
		}
		if s.eof {
			if len(s.buf) == 0 {
				if s.off == 0 {
					return segment{}, fmt.Errorf("%s: empty bzip2 input", s.file)
				}
				return segment{}, io.EOF
			}
			if len(s.offsets) > 0 {
				return segment{}, fmt.Errorf("%s: index offset %d is past the end of the file (%d bytes)", s.file, s.offsets[0], s.off+int64(len(s.buf)))
			}
			if s.off == 0 && !s.indexed {
				// The whole input is one stream: decompressing it on the read-ahead
				// goroutine lets the caller parse its first text while the rest decodes.
				s.done = true
				return segment{tail: bytes.NewReader(s.buf)}, nil
			}
			return s.cut(len(s.buf)), nil
		}
		if len(s.buf) > s.max {
			// No stream start in MaxStreamBytes: a single-stream file, or streams too big to
			// hold. The rest is decompressed as one sequential stream.
			s.done = true
			return segment{off: s.off, tail: io.MultiReader(bytes.NewReader(s.buf), s.r)}, nil
		}
		if err := s.fill(); err != nil {
			return segment{}, err
		}
	}
}

// cut hands out buf[:k] and keeps the rest.
func (s *splitter) cut(k int) segment {
	seg := segment{data: s.buf[:k:k], off: s.off}
	s.buf = append(make([]byte, 0, max(readSize, len(s.buf)-k)), s.buf[k:]...)
	s.off += int64(k)
	s.scanFrom = 0
	return seg
}

func (s *splitter) fill() error {
	if len(s.buf) == cap(s.buf) {
		s.buf = slices.Grow(s.buf, max(readSize, len(s.buf)))
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil:
		return fmt.Errorf("%s: reading byte %d: %w", s.file, s.off+int64(len(s.buf)), err)
	}
	return nil
}

// boundary returns the index in buf of the next stream start after buf[0], 0 when buf holds
// none yet.
func (s *splitter) boundary() (int, error) {
	if s.off == 0 && s.scanFrom == 0 && len(s.buf) >= 4 && !isStreamHeader(s.buf) {
		return 0, fmt.Errorf("%s: not bzip2 data (no \"BZh\" header)", s.file)
	}
	if s.indexed {
		for len(s.offsets) > 0 && s.offsets[0] <= s.off {
			s.offsets = s.offsets[1:] // the start of buf, or behind it (a repeated offset)
		}
		if len(s.offsets) == 0 {
			return 0, nil
		}
		k := s.offsets[0] - s.off
		if k+4 > int64(len(s.buf)) {
			return 0, nil
		}
		if !isStreamHeader(s.buf[k:]) {
			return 0, fmt.Errorf("%s: index offset %d is not the start of a bzip2 stream", s.file, s.offsets[0])
		}
		return int(k), nil
	}
	from := max(s.scanFrom, 1)
	for from < len(s.buf) {
		i := bytes.Index(s.buf[from:], []byte("BZh"))
		if i < 0 {
			s.scanFrom = max(1, len(s.buf)-9) // a start may straddle the next read
			return 0, nil
		}
		at := from + i
		if at+10 > len(s.buf) {
			s.scanFrom = at
			return 0, nil
		}
		if isStreamHeader(s.buf[at:]) && bytes.Equal(s.buf[at+4:at+10], streamMagic) {
			return at, nil
		}
		from = at + 1
	}
	return 0, nil
}

// isStreamHeader reports whether b starts with "BZh" and a level digit.
func isStreamHeader(b []byte) bool {
	return len(b) >= 4 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9'
}
