//go:build !amd64 || purego

package ivf

// dotI8 returns the inner product of the float query q with the signed byte codes c
// (len(c) >= len(q)).
func dotI8(q []float32, c []byte) float32 { return dotI8Generic(q, c) }
