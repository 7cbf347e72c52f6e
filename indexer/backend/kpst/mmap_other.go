//go:build !unix

package kpst

import "os"

// mapFile reads the file whole where memory mapping is not available.
func mapFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	return b, func() error { return nil }, err
}
