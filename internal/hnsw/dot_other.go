//go:build !amd64 || purego

package hnsw

import "unsafe"

// dot returns the inner product of a and b; len(b) must be at least len(a).
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// dotU8 returns the inner product of the scaled query q with the codes c (len(c) >= len(q)).
func dotU8(q []float32, c []uint8) float32 { return dotU8Generic(q, c) }

// prefetch is a no-op without assembly.
func prefetch(unsafe.Pointer, int) {}
