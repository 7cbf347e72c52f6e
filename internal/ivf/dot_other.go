//go:build !amd64 || purego

package ivf

// dotI8 returns the inner product of the float query q with the signed byte codes c
// (len(c) >= len(q)).
func dotI8(q []float32, c []byte) float32 { return dotI8Generic(q, c) }

// dotsI16 writes into out the inner products of the word query q with each of the
// len(out) consecutive rows of len(q) signed bytes in c.
func dotsI16(q []int16, c []byte, out []int32) { dotsI16Generic(q, c, out) }

// prefetchBytes is a hint that only the assembly acts on.
func prefetchBytes([]byte) {}

// prefetchFloats is a hint that only the assembly acts on.
func prefetchFloats([]float32) {}
