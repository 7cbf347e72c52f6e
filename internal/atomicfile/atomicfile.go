// Package atomicfile writes output files with one durability rule: the data goes to a temporary
// file in the target's directory, the file is fsynced, renamed over the target, and the directory
// is fsynced, so a crash leaves the old file or the new one and never a truncated mix. It never
// replaces a target that is not a regular file: "-" is standard output, a FIFO or device is
// written in place, and a symbolic link is written through to the file it names.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Options say how a target is created. The zero value is ready to use.
type Options struct {
	// Perm is the mode of a file that does not exist yet (default 0o644). A regular file that
	// is replaced keeps its own mode.
	Perm fs.FileMode
	// Stdout receives the output when the path is "-" (default os.Stdout).
	Stdout io.Writer
}

// maxLinks bounds symbolic link resolution, as the kernel does (ELOOP).
const maxLinks = 40

// WriteFile writes data to path under the package's rule.
func WriteFile(path string, data []byte, opts Options) error {
	return Write(path, opts, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write calls write with a buffered writer for path and commits what it wrote under the
// package's rule. If write fails, a regular target is left untouched and the temporary file is
// removed; a FIFO, device or standard output may have received part of the output, since
// those cannot be replaced. Errors of write are returned as they are; the others name path.
func Write(path string, opts Options, write func(io.Writer) error) error {
	if path == "-" {
		out := opts.Stdout
		if out == nil {
			out = os.Stdout
		}
		return writeBuffered("standard output", out, write)
	}
	target, info, err := resolve(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if info != nil && !info.Mode().IsRegular() {
		return writeInPlace(target, write)
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	if info != nil {
		perm = info.Mode().Perm()
	}
	return replace(target, perm, write)
}

// resolve follows symbolic links from path to the file they finally name, which may not exist
// yet (a dangling link is written through, creating its target). info is nil when it does not.
func resolve(path string) (string, fs.FileInfo, error) {
	for range maxLinks {
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return path, info, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", nil, fmt.Errorf("more than %d symbolic links", maxLinks)
}

// writeInPlace writes to a FIFO, a device or another file that a rename would destroy. There
// is nothing to sync or rename: such a file has no content of its own to keep consistent.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := writeBuffered(path, f, write); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// replace writes a temporary file beside path, syncs it, renames it over path and syncs the
// directory, so that the rename itself survives a crash.
func replace(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(perm); err != nil { // CreateTemp makes 0600 files
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := writeBuffered(path, f, write); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	committed = true
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("writing %s: syncing its directory: %w", path, err)
	}
	return nil
}

// writeBuffered runs write on a buffer over w and flushes it; name is w's name for errors.
func writeBuffered(name string, w io.Writer, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// SyncDir fsyncs a directory, which makes the renames and creations inside it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
