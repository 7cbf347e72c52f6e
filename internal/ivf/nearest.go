package ivf

import "math"

// A vector's list is that of its nearest centroid (largest inner product), found by comparing
// it with every centroid. A search of the graph over the centroids (candidate list 64) took
// about 131 to 146 µs a vector at 8,192 centroids of 256 dimensions and missed the nearest
// centroid for about one vector in twenty. This comparison streams the centroids once per run
// of vectors, in blocks that stay in the first-level cache while the run passes over them,
// and scores three vectors against four centroids at a time (nearest3x4), keeping each lane's
// best rather than writing the products out, so the loop is bound by the multiplications
// rather than by memory.

// Tile sizes, in bytes of float rows: a block of centroids, and the run of vectors that passes
// over each block. At 256 dimensions, 20,000 vectors against 8,192 centroids took 52.9 to 60.5
// µs a vector with blocks of 8 to 32 KiB and runs of 192 to 384 KiB (two runs each): any such
// sizes do, as long as a block stays in the first-level cache and a run in the second.
const (
	nearestBlockBytes = 16 << 10
	nearestRunBytes   = 384 << 10
)

// nearestTable holds the centroids' directions for exact assignment: rows padded with zeros to
// a multiple of 8 dimensions, and to a multiple of 4 rows with copies of the last centroid
// (which score what it scores and, coming after it, are never chosen over it).
type nearestTable struct {
	dim, dpad, lists int
	block, run       int // centroids a block (a multiple of 4), vectors a run (a multiple of 3)
	rows             []float32
}

// tileBest is what nearest3x4 keeps for three vectors (its layout is the assembly's): for each
// vector and each lane (the centroids of index equal to the lane modulo 4), the largest inner
// product so far and its centroid; the indices of the next group of four rows; and fours.
type tileBest struct {
	best [3][4]float32
	idx  [3][4]int32
	cur  [4]int32
	four [4]int32
}

// newNearestTable copies the lists unit directions of dim floats each (dirs) into a table.
func newNearestTable(dirs []float32, dim, lists int) *nearestTable {
	dpad := (dim + 7) &^ 7
	padded := (lists + 3) &^ 3
	t := &nearestTable{dim: dim, dpad: dpad, lists: lists, rows: make([]float32, padded*dpad)}
	for l := range padded {
		src := min(l, lists-1)
		copy(t.rows[l*dpad:l*dpad+dim], dirs[src*dim:(src+1)*dim])
	}
	t.block = max(4, nearestBlockBytes/(4*dpad)&^3)
	t.run = max(3, nearestRunBytes/(4*dpad)/3*3)
	return t
}

// nearestScratch is one goroutine's working memory for nearest.
type nearestScratch struct {
	q  []float32  // a run of vectors padded to the table's dimensions
	st []tileBest // the state of each three vectors of the run
}

// nearest sets out[i] to the list of the i-th vector of vecs (rows of t.dim floats): the
// centroid of largest inner product, the lowest such on a tie. The result does not depend on
// how the vectors are cut into calls or runs.
func (t *nearestTable) nearest(vecs []float32, out []uint32, s *nearestScratch) {
	n := len(vecs) / t.dim
	if len(s.q) < t.run*t.dpad {
		s.q = make([]float32, t.run*t.dpad)
		s.st = make([]tileBest, t.run/3)
	}
	padded := len(t.rows) / t.dpad
	for first := 0; first < n; first += t.run {
		count := min(t.run, n-first)
		q := s.q[:count*t.dpad]
		if t.dpad == t.dim {
			q = vecs[first*t.dim : (first+count)*t.dim]
		} else {
			for i := range count {
				row := q[i*t.dpad : (i+1)*t.dpad]
				copy(row, vecs[(first+i)*t.dim:(first+i+1)*t.dim])
				clear(row[t.dim:])
			}
		}
		tiles := s.st[:(count+2)/3]
		for k := range tiles {
			st := &tiles[k]
			for r := range st.best {
				for j := range 4 {
					st.best[r][j], st.idx[r][j] = float32(math.Inf(-1)), int32(j)
				}
			}
			st.four = [4]int32{4, 4, 4, 4}
		}
		for c0 := 0; c0 < padded; c0 += t.block {
			cn := min(t.block, padded-c0)
			crows := t.rows[c0*t.dpad : (c0+cn)*t.dpad]
			for k := range tiles {
				// A run's last one or two vectors fill the tile with copies of the last row.
				r := 3 * k
				r1, r2 := min(r+1, count-1), min(r+2, count-1)
				st := &tiles[k]
				st.cur = [4]int32{int32(c0), int32(c0 + 1), int32(c0 + 2), int32(c0 + 3)}
				nearest3x4(q[r*t.dpad:(r+1)*t.dpad], q[r1*t.dpad:(r1+1)*t.dpad], q[r2*t.dpad:(r2+1)*t.dpad],
					crows, t.dpad, cn/4, st)
			}
		}
		for i := range count {
			st := &tiles[i/3]
			b, bl := st.best[i%3][0], st.idx[i%3][0]
			for j := 1; j < 4; j++ {
				if v, l := st.best[i%3][j], st.idx[i%3][j]; v > b || (v == b && l < bl) {
					b, bl = v, l
				}
			}
			out[first+i] = uint32(bl)
		}
	}
}

// nearest3x4Generic is nearest3x4 in Go.
func nearest3x4Generic(q0, q1, q2, c []float32, dim, quads int, st *tileBest) {
	qs := [3][]float32{q0[:dim], q1[:dim], q2[:dim]}
	for g := range quads {
		for r, q := range qs {
			for j := range 4 {
				if v := dot(q, c[(g*4+j)*dim:(g*4+j+1)*dim]); v > st.best[r][j] {
					st.best[r][j], st.idx[r][j] = v, st.cur[j]
				}
			}
		}
		for j := range st.cur {
			st.cur[j] += st.four[j]
		}
	}
}
