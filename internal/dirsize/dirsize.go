// Package dirsize measures what an index takes on disk: the size of the regular files under a
// directory, as the benchmarks report for Kairos's indexes and for every anchor's.
package dirsize

import (
	"io/fs"
	"path/filepath"
)

// Bytes is the total size of the regular files under dir (links and directories count 0).
func Bytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}
