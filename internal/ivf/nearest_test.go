package ivf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomUnitRows returns n unit rows of dim floats.
func randomUnitRows(rng *rand.Rand, n, dim int) []float32 {
	out := make([]float32, n*dim)
	for i := range n {
		row := out[i*dim : (i+1)*dim]
		for d := range row {
			row[d] = float32(rng.NormFloat64())
		}
		normalize(row, row)
	}
	return out
}

// TestNearest3x4 compares the kernel with its Go form: the same lanes' maxima (within
// rounding) and, where the products are not near a tie, the same indices.
func TestNearest3x4(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{8, 16, 256, 264, 1024} {
		for _, quads := range []int{1, 2, 5, 40} {
			q := randomUnitRows(rng, 3, dim)
			c := randomUnitRows(rng, 4*quads, dim)
			var got, want tileBest
			for _, st := range []*tileBest{&got, &want} {
				for r := range st.best {
					for j := range 4 {
						st.best[r][j], st.idx[r][j] = float32(math.Inf(-1)), -1
					}
				}
				st.cur, st.four = [4]int32{100, 101, 102, 103}, [4]int32{4, 4, 4, 4}
			}
			nearest3x4(q[:dim], q[dim:2*dim], q[2*dim:], c, dim, quads, &got)
			nearest3x4Generic(q[:dim], q[dim:2*dim], q[2*dim:], c, dim, quads, &want)
			if got.cur != want.cur {
				t.Fatalf("dim %d quads %d: next indices %v, want %v", dim, quads, got.cur, want.cur)
			}
			for r := range 3 {
				for j := range 4 {
					if math.Abs(float64(got.best[r][j]-want.best[r][j])) > 1e-5 {
						t.Fatalf("dim %d quads %d: row %d lane %d max %g, want %g", dim, quads, r, j, got.best[r][j], want.best[r][j])
					}
					l := want.idx[r][j]
					if got.idx[r][j] != l && math.Abs(float64(dotGenericF(q[r*dim:(r+1)*dim], c[int(l-100)*dim:])-dotGenericF(q[r*dim:(r+1)*dim], c[int(got.idx[r][j]-100)*dim:]))) > 1e-5 {
						t.Fatalf("dim %d quads %d: row %d lane %d index %d, want %d", dim, quads, r, j, got.idx[r][j], l)
					}
				}
			}
		}
	}
}

// TestNearestTable compares the tiled assignment with a comparison of each vector with each
// centroid, over dimensions that are and are not multiples of 8, and numbers of lists and
// vectors that do not fill a tile, and checks that the result does not depend on how the
// vectors are cut into calls.
func TestNearestTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{3, 8, 13, 256, 300} {
		for _, lists := range []int{1, 3, 4, 5, 130, 1000} {
			t.Run(fmt.Sprintf("dim%d/lists%d", dim, lists), func(t *testing.T) {
				dirs := randomUnitRows(rng, lists, dim)
				n := 401
				vecs := randomUnitRows(rng, n, dim)
				tab := newNearestTable(dirs, dim, lists)
				got := make([]uint32, n)
				var s nearestScratch
				tab.nearest(vecs, got, &s)
				for i := range n {
					v := vecs[i*dim : (i+1)*dim]
					best, bs := 0, float32(math.Inf(-1))
					for l := range lists {
						if d := dotGenericF(v, dirs[l*dim:(l+1)*dim]); d > bs {
							best, bs = l, d
						}
					}
					if int(got[i]) >= lists {
						t.Fatalf("vector %d: list %d of %d", i, got[i], lists)
					}
					if g := dotGenericF(v, dirs[int(got[i])*dim:]); int(got[i]) != best && bs-g > 1e-5 {
						t.Fatalf("vector %d: list %d (%g), the nearest is %d (%g)", i, got[i], g, best, bs)
					}
				}
				// The same vectors in calls of 1, 2 and 7 vectors give the same lists.
				for _, step := range []int{1, 2, 7} {
					part := make([]uint32, n)
					for lo := 0; lo < n; lo += step {
						hi := min(n, lo+step)
						tab.nearest(vecs[lo*dim:hi*dim], part[lo:hi], &s)
					}
					for i := range part {
						if part[i] != got[i] {
							t.Fatalf("calls of %d vectors: vector %d in list %d, not %d", step, i, part[i], got[i])
						}
					}
				}
			})
		}
	}
}

func TestNearestTableZeroVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dirs := randomUnitRows(rng, 9, 16)
	tab := newNearestTable(dirs, 16, 9)
	out := []uint32{7}
	var s nearestScratch
	tab.nearest(make([]float32, 16), out, &s)
	if out[0] != 0 {
		t.Fatalf("a zero vector went to list %d, want 0 (every centroid scores it 0)", out[0])
	}
}

// dotGenericF is the inner product in float64, as the reference of these tests.
func dotGenericF(a, b []float32) float32 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return float32(s)
}

// TestWriterListsOf runs a writer's two ways of finding a vector's list on the same vectors:
// the comparison with every centroid must find the nearest, and the graph (what a writer of
// more than exactMaxLists lists uses) nearly always the same list.
func TestWriterListsOf(t *testing.T) {
	const dim = 48
	vecs := clustered(3000, dim, 40, 9)
	w, err := Create(t.TempDir(), dim, Options{Lists: 64, Sample: 2000}, len(vecs))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	keys := make([]uint32, len(vecs))
	for i := range keys {
		keys[i] = uint32(i)
	}
	if err := w.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	if w.near == nil || w.graph == nil {
		t.Fatalf("a trained writer of 64 lists: comparison table %v, graph %v", w.near != nil, w.graph != nil)
	}
	flat := make([]float32, len(vecs)*dim)
	for i, v := range vecs {
		normalize(flat[i*dim:(i+1)*dim], v)
	}
	s := w.getScratch()
	exact := make([]uint32, len(vecs))
	w.listsOf(flat, exact, s)
	near := w.near
	w.near = nil
	graph := make([]uint32, len(vecs))
	w.listsOf(flat, graph, s)
	w.near = near
	agree := 0
	dirs := w.cent.dirs
	for i := range vecs {
		v := flat[i*dim : (i+1)*dim]
		bs := float32(math.Inf(-1))
		for l := range w.cent.lists {
			bs = max(bs, dotGenericF(v, dirs[l*dim:(l+1)*dim]))
		}
		if got := dotGenericF(v, dirs[int(exact[i])*dim:]); bs-got > 1e-5 {
			t.Fatalf("vector %d: list %d scores %g, the nearest centroid %g", i, exact[i], got, bs)
		}
		if graph[i] == exact[i] {
			agree++
		}
	}
	if share := float64(agree) / float64(len(vecs)); share < 0.95 {
		t.Errorf("the graph found the nearest list for %.3f of the vectors, want at least 0.95", share)
	}
}
