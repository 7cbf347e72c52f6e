//go:build !unix

package kpst

import "os"

// mapFile reads the file whole where memory mapping is not available; release does nothing.
func mapFile(path string) ([]byte, func() error, func([]byte), error) {
	b, err := os.ReadFile(path)
	return b, func() error { return nil }, func([]byte) {}, err
}
