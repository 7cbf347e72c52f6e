package ivf

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/filesum"
)

// File is a file a Writer wrote, with its size and sha256 as written (a Kairos manifest
// records them without reading the file back).
type File struct {
	Name   string
	Size   int64
	SHA256 [sha256.Size]byte
}

// mapped is a file of the index mapped into memory.
type mapped struct {
	name string
	b    []byte
}

// mapPath maps the file at path; verifyBelow is the size up to which its caller checks its
// checksum (the bytes are then read once anyway).
func mapPath(path string, random bool) (*mapped, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b, err := mapFile(f, fi.Size(), random)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return &mapped{name: path, b: b}, nil
}

func (m *mapped) close() error {
	if m == nil {
		return nil
	}
	b := m.b
	m.b = nil
	return unmapFile(b)
}

// writeFile writes a new file name in dir with write, hashing it as it goes; the file must not
// exist (a name is never reused: Head.NextFile).
func writeFile(dir, name string, write func(w *filesum.Writer) error) (File, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return File{}, err
	}
	sw := filesum.New(f)
	if err := write(sw); err != nil {
		f.Close()
		os.Remove(path)
		return File{}, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return File{}, fmt.Errorf("writing %s: %w", path, err)
	}
	return File{Name: name, Size: sw.Size(), SHA256: sw.Sum()}, nil
}

// linkFiles makes the files names of dir src hard links in dst (copies where links fail).
func linkFiles(src, dst string, names []string) error {
	for _, n := range names {
		if err := atomicfile.LinkOrCopy(filepath.Join(src, n), filepath.Join(dst, n)); err != nil {
			return fmt.Errorf("sharing %s with the index derived from it: %w", n, err)
		}
	}
	return nil
}
