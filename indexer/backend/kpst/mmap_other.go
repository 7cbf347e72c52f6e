//go:build !unix

package kpst

import "os"

// mapFile reads the file whole where memory mapping is not available; release and readahead
// do nothing.
func mapFile(path string) ([]byte, func() error, func([]byte), func([]byte, bool), error) {
	b, err := os.ReadFile(path)
	return b, func() error { return nil }, func([]byte) {}, func([]byte, bool) {}, err
}
