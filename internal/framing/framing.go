// Package framing is the checksummed envelope of Kairos's binary files: the passage store
// and the tombstone set (indexer/backend/kpst), the document table (indexer), the postings
// segments and their deleted-term counts (internal/postings), and the files of the inverted-file
// vector index (internal/ivf):
//
//	magic [4]byte | version uint32 | payload | crc32c(magic, version and payload) uint32 | magic [4]byte
//
// Integers are little endian. The magic at both ends tells a file of another kind and a
// truncated file apart; the version lets a reader refuse a layout it does not know instead of
// misreading it; the CRC-32C (Castagnoli) catches damage. What the payload means is the owning
// package's business. Every format has a magic of its own (TestMagicsAreDistinct lists them
// and fails on a duplicate), so that a file opened as the wrong kind is refused as such rather
// than as an old version of the right one.
package framing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// HeaderSize and FooterSize are the bytes the envelope adds before and after the payload.
const (
	HeaderSize = 8
	FooterSize = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Format names one kind of file.
type Format struct {
	Name    string // for errors: "passage store"
	Magic   string // exactly 4 bytes
	Version uint32 // the one version this build writes and reads
}

// ErrFormat is wrapped by every error that says a file is not a valid file of its format.
var ErrFormat = errors.New("invalid file")

// VersionError says a file has the right magic but a version this build does not read.
type VersionError struct {
	Format Format
	Got    uint32
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s version %d, this build reads version %d", e.Format.Name, e.Got, e.Format.Version)
}

// Is makes a VersionError match ErrFormat.
func (e *VersionError) Is(target error) bool { return target == ErrFormat }

// Begin returns a buffer holding the header, to which the caller appends the payload before
// calling Seal.
func (f Format) Begin() []byte {
	f.mustValid()
	return binary.LittleEndian.AppendUint32([]byte(f.Magic), f.Version)
}

// Seal appends the footer to b, which Begin started.
func (f Format) Seal(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, f.Magic...)
}

// Open checks the envelope of a whole file and returns its payload, a view into b.
func (f Format) Open(b []byte) ([]byte, error) {
	payload, err := f.OpenUnverified(b)
	if err != nil {
		return nil, err
	}
	return payload, f.Verify(b)
}

// OpenUnverified checks the envelope's magic and version at both ends, but not the checksum,
// and returns the payload, a view into b. It is for files too large to read whole at open (a
// memory-mapped passage store of millions of passages): their readers must bound every access
// by what they parse, and Verify, or a sum of the whole file, checks them in full.
func (f Format) OpenUnverified(b []byte) ([]byte, error) {
	f.mustValid()
	if len(b) < HeaderSize+FooterSize || string(b[:4]) != f.Magic {
		return nil, fmt.Errorf("not a %s (bad magic or shorter than %d bytes): %w", f.Name, HeaderSize+FooterSize, ErrFormat)
	}
	if v := binary.LittleEndian.Uint32(b[4:8]); v != f.Version {
		return nil, &VersionError{Format: f, Got: v}
	}
	if string(b[len(b)-4:]) != f.Magic {
		return nil, fmt.Errorf("truncated %s (no closing magic): %w", f.Name, ErrFormat)
	}
	return b[HeaderSize : len(b)-FooterSize], nil
}

// Verify checks the checksum of a whole file whose envelope OpenUnverified accepted.
func (f Format) Verify(b []byte) error {
	body := b[:len(b)-FooterSize]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(body):]); got != want {
		return fmt.Errorf("%s checksum mismatch: stored %08x, computed %08x: %w", f.Name, want, got, ErrFormat)
	}
	return nil
}

func (f Format) mustValid() {
	if len(f.Magic) != 4 {
		panic(fmt.Sprintf("framing: magic %q of %s is not 4 bytes", f.Magic, f.Name))
	}
}

// Writer streams a payload into the envelope, for files too large to build in memory.
type Writer struct {
	f   Format
	w   io.Writer
	crc uint32
	n   uint64
}

// NewWriter writes the header of f to w.
func NewWriter(w io.Writer, f Format) (*Writer, error) {
	fw := &Writer{f: f, w: w}
	if _, err := fw.Write(f.Begin()); err != nil {
		return nil, err
	}
	return fw, nil
}

// Write appends p to the payload.
func (fw *Writer) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	fw.crc = crc32.Update(fw.crc, castagnoli, p[:n])
	fw.n += uint64(n)
	return n, err
}

// Offset is the number of bytes written so far, header included: the file offset at which
// the next payload byte lands.
func (fw *Writer) Offset() uint64 { return fw.n }

// Close writes the footer. It does not close the underlying writer.
func (fw *Writer) Close() error {
	footer := binary.LittleEndian.AppendUint32(nil, fw.crc)
	_, err := fw.w.Write(append(footer, fw.f.Magic...))
	return err
}
