package ivf

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/internal/framing"
)

// refinedGrid is the grid point of dimension i of a refinement code: sign(r_i) (1/2 + e_i),
// from the one-bit code's bit (r_i > 0) and the refinement's low bit.
func refinedGrid(positive, low bool) float64 {
	switch {
	case positive && low:
		return 1.5
	case positive:
		return 0.5
	case low:
		return -0.5
	}
	return -1.5
}

// residualPair is a rotated vector po near a list's centre c, of dpad dimensions.
func residualPair(rng *rand.Rand, dpad int) (po, c []float32) {
	po, c = make([]float32, dpad), make([]float32, dpad)
	for i := range po {
		c[i] = float32(rng.NormFloat64() * 0.05)
		po[i] = c[i] + float32(rng.NormFloat64()*0.03)
	}
	return po, c
}

// TestEncodeRefine holds encodeRefine to its definition: its grid point has the best cosine
// with the residual of any number of dimensions at 3/2, and its factors estimate ⟨po, q⟩
// exactly for q = c and q = po (where the estimator has no error).
func TestEncodeRefine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, dpad := range []int{64, 256} {
		for trial := range 10 {
			t.Run(fmt.Sprintf("%d dimensions %d", dpad, trial), func(t *testing.T) {
				po, c := residualPair(rng, dpad)
				if trial == 0 { // every magnitude equal: ties at the threshold
					for i := range po {
						po[i] = c[i] + 0.01*float32(1-2*(i%3%2))
					}
				}
				low := make([]uint64, refineWords(dpad/64))
				rs := newRefineScratch(dpad)
				encodeRefine(low, po, c, &rs)
				scale, bias := refineFactors(low)
				x := make([]float64, dpad)
				var xr, xx, rr float64
				abs := make([]float64, dpad)
				for i := range po {
					r := float64(po[i] - c[i])
					x[i] = refinedGrid(r > 0, low[i/64]>>(i%64)&1 == 1)
					xr += x[i] * r
					xx += x[i] * x[i]
					rr += r * r
					abs[i] = math.Abs(r)
				}
				got := xr / math.Sqrt(xx*rr)
				slices.Sort(abs)
				slices.Reverse(abs)
				var sum, pm, best float64
				for _, a := range abs {
					sum += a
				}
				for m := 0; m <= dpad; m++ {
					if m > 0 {
						pm += abs[m-1]
					}
					best = max(best, (sum/2+pm)/math.Sqrt(float64(dpad)/4+2*float64(m))/math.Sqrt(rr))
				}
				if got < best-1e-6 {
					t.Fatalf("cosine of the grid point with the residual %.6f, the best is %.6f", got, best)
				}
				for _, q := range [][]float32{c, po} {
					var cq, xq, want float64
					for i := range q {
						cq += float64(c[i]) * float64(q[i])
						xq += x[i] * float64(q[i])
						want += float64(po[i]) * float64(q[i])
					}
					if est := cq + float64(bias) + float64(scale)*xq; math.Abs(est-want) > 1e-5 {
						t.Fatalf("estimate %g, exactly %g", est, want)
					}
				}
			})
		}
	}
}

// TestRefined holds a search's refined estimate (the query's bit planes against the low bits)
// to the estimator's formula with the query as quantized, and the refined estimates to half
// the error of the one-bit ones or less (two bits a dimension: about 0.48 of it in theory).
func TestRefined(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, dpad := range []int{64, 256} {
		t.Run(fmt.Sprintf("%d dimensions", dpad), func(t *testing.T) {
			words := dpad / 64
			var err1, err2 float64
			const n = 2000
			for range n {
				po, c := residualPair(rng, dpad)
				q := make([]float32, dpad)
				for i := range q {
					q[i] = float32(rng.NormFloat64())
				}
				normalize(q, q)
				var qc queryCode
				qc.prepare(q, words)
				qq := make([]float64, dpad) // q as quantized
				for i := range qq {
					b := 0
					for p := range queryBits {
						b |= int(qc.planes[p*words+i/64]>>(i%64)&1) << p
					}
					qq[i] = float64(qc.dl) * (float64(b) - queryLevels/2.0)
				}
				code, low := make([]uint64, words), make([]uint64, refineWords(words))
				s1, b1, _ := encodeCode(code, po, c)
				rs := newRefineScratch(dpad)
				encodeRefine(low, po, c, &rs)
				s2, b2 := refineFactors(low)
				var cq, signs, xq, want float64
				for i := range q {
					pos := code[i/64]>>(i%64)&1 == 1
					sg := -1.0
					if pos {
						sg = 1
					}
					cq += float64(c[i]) * float64(q[i])
					signs += sg * qq[i]
					xq += refinedGrid(pos, low[i/64]>>(i%64)&1 == 1) * qq[i]
					want += float64(po[i]) * float64(q[i])
				}
				got := qc.refined(float32(signs), low, float32(cq))
				formula := cq + float64(b2) + float64(s2)*xq
				if math.Abs(float64(got)-formula) > 1e-5 {
					t.Fatalf("refined %g, the formula gives %g", got, formula)
				}
				one := cq + float64(b1) + float64(s1)*signs
				err1 += (one - want) * (one - want)
				err2 += (float64(got) - want) * (float64(got) - want)
			}
			ratio := math.Sqrt(err2 / err1)
			t.Logf("RMS error of the refined estimates %.3g, of the one-bit ones %.3g (%.2f)", math.Sqrt(err2/n), math.Sqrt(err1/n), ratio)
			if ratio > 0.6 {
				t.Fatalf("the refined estimates' error is %.2f of the one-bit ones'", ratio)
			}
		})
	}
}

// buildUnrefined builds vecs as an index of an older version would: no refinement codes.
func buildUnrefined(t *testing.T, dir string, vecs [][]float32, o Options, expect int) *Reader {
	t.Helper()
	return buildWith(t, dir, vecs, o, expect, func(w *Writer) { w.h.RefineBits = 0 })
}

// TestRefinement: an index with refinement codes finds more of the exact top 10 than one
// without when both rescore the same few candidates; an index without them (an older
// version's, its list segment of version 2) is still searched, and an update keeps it
// without them.
func TestRefinement(t *testing.T) {
	vecs := clustered(4000, 48, 40, 21)
	queries := clustered(60, 48, 40, 22)
	root := t.TempDir()
	with := build(t, filepath.Join(root, "with"), vecs, Options{}, len(vecs))
	without := buildUnrefined(t, filepath.Join(root, "without"), vecs, Options{}, len(vecs))
	if !with.refines || with.segs[0].refine == nil || without.refines || without.segs[0].refine != nil {
		t.Fatalf("refinement codes: %v and %v", with.refines, without.refines)
	}
	if err := with.Verify(); err != nil {
		t.Fatal(err)
	}
	recallOf := func(r *Reader, o SearchOptions) float64 {
		var sum float64
		for _, q := range queries {
			exact, err := r.Exact(q, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Search(q, 10, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum += recall(got, exact) / float64(len(queries))
		}
		return sum
	}
	o := SearchOptions{Probe: with.Options().Lists / 4, Rescore: 12}
	rw, rwo := recallOf(with, o), recallOf(without, o)
	t.Logf("recall@10 rescoring 12 at probe %d: %.3f with refinement codes, %.3f without", o.Probe, rw, rwo)
	if rw < rwo+0.05 {
		t.Errorf("recall@10 rescoring 12: %.3f with refinement codes, %.3f without", rw, rwo)
	}

	// Options.NoRefine writes what an older version wrote, the option recorded beside it: the
	// same hits as the index without them.
	noRefine := build(t, filepath.Join(root, "no-refine"), vecs, Options{NoRefine: true}, len(vecs))
	if noRefine.refines || noRefine.segs[0].refine != nil || noRefine.h.RefineBits != 0 || !noRefine.Options().NoRefine {
		t.Fatalf("NoRefine: refinement codes %v, %d bits, options %+v", noRefine.refines, noRefine.h.RefineBits, noRefine.Options())
	}
	for _, q := range queries[:10] {
		a, errA := noRefine.Search(q, 10, o, nil)
		b, errB := without.Search(q, 10, o, nil)
		if errA != nil || errB != nil || !slices.Equal(a, b) {
			t.Fatalf("NoRefine: hits %v (%v), without refinement codes %v (%v)", a, errA, b, errB)
		}
	}

	// The index without them, its list segment rewritten as version 2, as an older version
	// wrote it: the same hits.
	before, err := without.Search(queries[0], 10, SearchOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := without.Dir()
	without.Close()
	p := filepath.Join(dir, without.h.Lists[0].Name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[4:], legacyListsFormatV2.Version)
	body := b[:len(b)-framing.FooterSize]
	binary.LittleEndian.PutUint32(b[len(body):], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := Open(dir, OpenOptions{VerifyBelow: 0})
	if err != nil {
		t.Fatalf("a version 2 list segment: %v", err)
	}
	if err := old.Verify(); err != nil {
		t.Fatal(err)
	}
	after, err := old.Search(queries[0], 10, SearchOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Fatalf("version 2 segment: hits %v, before %v", after, before)
	}
	w, err := Derive(filepath.Join(root, "update"), old, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	extra := clustered(50, 48, 40, 23)
	if err := w.Add(context.Background(), seqKeys(len(vecs), len(extra)), extra); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(context.Background(), true, nil); err != nil {
		t.Fatal(err)
	}
	up, err := Open(filepath.Join(root, "update"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if up.h.RefineBits != 0 || len(up.segs) != 2 || up.segs[1].refine != nil {
		t.Fatalf("update of an index without refinement codes: %d bits, %d segments", up.h.RefineBits, len(up.segs))
	}
	if got, err := up.Search(extra[0], 1, SearchOptions{}, nil); err != nil || len(got) != 1 || got[0].Key != uint32(len(vecs)) {
		t.Fatalf("the added vector: %v, %v", got, err)
	}
}

// TestSortMagnitudes holds the radix sort of encodeRefine to slices.Sort of the same numbers:
// the passes it skips (bytes every key shares) and those it runs.
func TestSortMagnitudes(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	wide := make([]float32, 300) // every byte of the keys differs somewhere
	for i := range wide {
		wide[i] = float32(math.Abs(rng.NormFloat64()) * math.Pow(10, float64(rng.IntN(30)-15)))
	}
	narrow := make([]float32, 256) // one exponent: the top byte shared
	for i := range narrow {
		narrow[i] = 1 + rng.Float32()
	}
	cases := []struct {
		name string
		vals []float32
	}{
		{"empty", nil},
		{"one", []float32{0.25}},
		{"zeros and equal values", []float32{0, 0.5, 0, 0.5, 0.5, 0}},
		{"reversed", []float32{8, 4, 2, 1, 0.5, 0.25, 1e-30, 0}},
		{"infinity and the largest", []float32{float32(math.Inf(1)), math.MaxFloat32, 1, math.SmallestNonzeroFloat32}},
		{"wide", wide},
		{"narrow", narrow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keys := make([]uint32, len(tc.vals))
			for i, v := range tc.vals {
				keys[i] = math.Float32bits(v)
			}
			sortMagnitudes(keys, make([]uint32, len(keys)))
			want := slices.Clone(tc.vals)
			slices.Sort(want)
			for i, k := range keys {
				if got := math.Float32frombits(k); got != want[i] {
					t.Fatalf("position %d: %g, want %g", i, got, want[i])
				}
			}
		})
	}
}

// BenchmarkEncodeRefine is the cost of one vector's refinement code at 256 dimensions, which a
// build pays once a vector.
func BenchmarkEncodeRefine(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	const dpad, pairs = 256, 64
	var pos, cs [][]float32
	for range pairs {
		po, c := residualPair(rng, dpad)
		pos, cs = append(pos, po), append(cs, c)
	}
	rec := make([]uint64, refineWords(dpad/64))
	s := newRefineScratch(dpad)
	b.ResetTimer()
	for i := range b.N {
		encodeRefine(rec, pos[i%pairs], cs[i%pairs], &s)
	}
}
