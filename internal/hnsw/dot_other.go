//go:build !amd64 || purego

package hnsw

import "unsafe"

// dot returns the inner product of a and b; len(b) must be at least len(a).
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// prefetch is a no-op without assembly.
func prefetch(unsafe.Pointer, int) {}
