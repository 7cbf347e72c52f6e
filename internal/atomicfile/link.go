package atomicfile

import (
	"io"
	"os"
)

// LinkOrCopy makes dst a hard link of src, or a copy when the file system refuses links.
// Generations share their immutable files this way: a derived generation links its base's
// segments, so an update costs what it changes, not the size of the index. dst must not exist.
func LinkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return Copy(src, dst)
}

// Copy copies src to dst, a new file (dst must not exist). It does not sync: the caller syncs
// the tree it is building before publishing it.
func Copy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
