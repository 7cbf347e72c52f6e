package qdrant

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// spill is a temporary file of records, so a writer's memory stays bounded by its vocabulary
// rather than by the corpus. Records are written by one goroutine at a time (the caller
// locks) and read back in order.
type spill struct {
	f  *os.File
	bw *bufio.Writer
}

func newSpill(dir, pattern string) (*spill, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("qdrant spill file: %w", err)
	}
	return &spill{f: f, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (s *spill) write(rec []byte) error {
	var n [binary.MaxVarintLen64]byte
	if _, err := s.bw.Write(n[:binary.PutUvarint(n[:], uint64(len(rec)))]); err != nil {
		return err
	}
	_, err := s.bw.Write(rec)
	return err
}

// each calls fn with every record in order; rec is valid only during the call.
func (s *spill) each(fn func(rec []byte) error) error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	defer s.f.Seek(0, io.SeekEnd)
	br := bufio.NewReaderSize(s.f, 1<<20)
	var buf []byte
	for {
		n, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("spill file %s: %w", s.f.Name(), err)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return fmt.Errorf("spill file %s: truncated record: %w", s.f.Name(), err)
		}
		if err := fn(buf); err != nil {
			return err
		}
	}
}

func (s *spill) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// termsRecord encodes a passage's write sequence number, key, length and term frequencies.
func termsRecord(seq uint64, key uint32, length int, terms []string, freqs []int) []byte {
	b := binary.AppendUvarint(nil, seq)
	b = binary.AppendUvarint(b, uint64(key))
	b = binary.AppendUvarint(b, uint64(length))
	b = binary.AppendUvarint(b, uint64(len(terms)))
	for i, t := range terms {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(freqs[i]))
	}
	return b
}

// errDamagedRecord reports a spill record that does not decode.
var errDamagedRecord = errors.New("qdrant spill: damaged record")

// decodeTerms decodes a termsRecord, calling fn for each term (t is valid only during the call).
func decodeTerms(rec []byte, fn func(t []byte, f int)) (seq uint64, key uint32, length int, err error) {
	bad := errDamagedRecord
	next := func() uint64 {
		v, n := binary.Uvarint(rec)
		if n <= 0 {
			err = bad
			return 0
		}
		rec = rec[n:]
		return v
	}
	seq = next()
	key = uint32(next())
	length = int(next())
	nt := next()
	for i := uint64(0); i < nt && err == nil; i++ {
		l := next()
		if err != nil || l > uint64(len(rec)) {
			return 0, 0, 0, bad
		}
		t := rec[:l]
		rec = rec[l:]
		f := int(next())
		if err == nil {
			fn(t, f)
		}
	}
	if err == nil && len(rec) != 0 {
		err = bad
	}
	return seq, key, length, err
}
