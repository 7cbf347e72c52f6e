package ivf

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/filesum"
)

// chunkWriter appends vectors to a new vector chunk as they are added: each goes to disk at
// once (through a buffer), so a build holds no vector in memory beyond the codes of its lists.
type chunkWriter struct {
	name  string
	path  string
	f     *os.File
	sum   *filesum.Writer
	fw    *frameWriter
	dim   int
	first int
	keys  []uint32
	rec   []byte
}

func newChunkWriter(dir, name string, dim, first int) (*chunkWriter, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	c := &chunkWriter{name: name, path: path, f: f, dim: dim, first: first, rec: make([]byte, recSize(dim))}
	c.sum = filesum.New(f)
	c.fw = newFrameWriter(c.sum, chunkFormat)
	var h [chunkHeader - 8]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(dim))
	binary.LittleEndian.PutUint64(h[8:], uint64(first))
	c.fw.Write(h[:])
	return c, c.fw.err
}

// add appends one vector: its key, codes and inverse norm.
func (c *chunkWriter) add(key uint32, code []byte, inv float32) error {
	binary.LittleEndian.PutUint32(c.rec, math.Float32bits(inv))
	copy(c.rec[4:], code)
	c.keys = append(c.keys, key)
	_, err := c.fw.Write(c.rec)
	return err
}

func (c *chunkWriter) count() int { return len(c.keys) }

// read copies the records of the chunk's vectors i to j-1 into dst (from the file: the buffer
// is flushed first).
func (c *chunkWriter) read(dst []byte, i, j int) error {
	if err := c.fw.flush(); err != nil {
		return err
	}
	_, err := c.f.ReadAt(dst[:(j-i)*recSize(c.dim)], chunkHeader+int64(i)*int64(recSize(c.dim)))
	return err
}

// seal writes the keys and the trailer and closes the file.
func (c *chunkWriter) seal() (File, error) {
	c.fw.padTo()
	c.fw.Write(bytesOf(c.keys))
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(c.keys)))
	c.fw.Write(n[:])
	if err := c.fw.finish(); err != nil {
		c.abort()
		return File{}, fmt.Errorf("writing %s: %w", c.path, err)
	}
	if err := c.f.Close(); err != nil {
		return File{}, fmt.Errorf("writing %s: %w", c.path, err)
	}
	c.f = nil
	return File{Name: c.name, Size: c.sum.Size(), SHA256: c.sum.Sum()}, nil
}

// abort closes and removes the file.
func (c *chunkWriter) abort() {
	if c.f != nil {
		c.f.Close()
		c.f = nil
		os.Remove(c.path)
	}
}
