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

// nearest3x4 compares the three query rows with the quads*4 rows of c and updates st.
func nearest3x4(q0, q1, q2, c []float32, dim, quads int, st *tileBest) {
	nearest3x4Generic(q0, q1, q2, c, dim, quads, st)
}
