package hnsw

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

// TestReserveAllocatesOnce builds the same graph batch by batch with and without Reserve, from
// floats and from codes, on an empty graph, on one already holding most of the nodes and on
// one read back mapped: after Reserve no Add moves the arrays that grow with the graph, the
// per-node arrays end exactly full (no capacity rounded up), and the graph written is byte for
// byte the one built without it.
func TestReserveAllocatesOnce(t *testing.T) {
	const dim, n, batch = 24, 3000, 250
	keys, vecs := gaussianSet(n, dim, 11, 12)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		build  string
		first  int  // nodes added before Reserve
		mapped bool // those saved and loaded mapped
	}{
		{"floats", "", 0, false},
		{"codes", BuildCodes, 0, false},
		{"floats, most added", "", 2000, false},
		{"codes, most added", BuildCodes, 2000, false},
		{"codes mapped", BuildCodes, batch, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Seed: 4, Workers: 1, Build: tc.build, SpillDir: t.TempDir()}
			build := func(reserve bool) []byte {
				g, err := New(dim, opts)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < tc.first; i += batch {
					if err := g.Add(ctx, keys[i:i+batch], vecs[i:i+batch]); err != nil {
						t.Fatal(err)
					}
				}
				start := tc.first
				if tc.mapped {
					g = savedMapped(t, g, tc.build, opts.SpillDir)
					g.opts.Workers = 1 // a file does not keep Workers: one makes the two builds the same
				}
				defer g.Close()
				if reserve {
					if err := g.Reserve(n - start); err != nil {
						t.Fatal(err)
					}
				}
				arrays := func() []uintptr {
					var ps []uintptr
					for _, p := range []unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(g.vecs)), unsafe.Pointer(unsafe.SliceData(g.bcodes)),
						unsafe.Pointer(unsafe.SliceData(g.brange)), unsafe.Pointer(unsafe.SliceData(g.level0)), unsafe.Pointer(unsafe.SliceData(g.keys)),
						unsafe.Pointer(unsafe.SliceData(g.levels)), unsafe.Pointer(unsafe.SliceData(g.upperOff)), unsafe.Pointer(unsafe.SliceData(g.upper))} {
						ps = append(ps, uintptr(p))
					}
					return ps
				}
				before := arrays()
				for i := start; i < n; i += batch {
					if err := g.Add(ctx, keys[i:i+batch], vecs[i:i+batch]); err != nil {
						t.Fatal(err)
					}
				}
				if reserve {
					if after := arrays(); !equalPtrs(before, after) {
						t.Errorf("an Add after Reserve(%d) moved the graph's arrays: %v, then %v", n-start, before, after)
					}
					for name, lc := range map[string][2]int{"vecs": {len(g.vecs), cap(g.vecs)}, "bcodes": {len(g.bcodes), cap(g.bcodes)},
						"brange": {len(g.brange), cap(g.brange)}, "level0": {len(g.level0), cap(g.level0)}, "keys": {len(g.keys), cap(g.keys)},
						"levels": {len(g.levels), cap(g.levels)}, "upperOff": {len(g.upperOff), cap(g.upperOff)}} {
						if lc[0] != lc[1] {
							t.Errorf("%s: %d elements, capacity %d after Reserve of exactly the nodes added", name, lc[0], lc[1])
						}
					}
				}
				if tc.build == BuildCodes && (g.vecs != nil || g.spill == nil) {
					t.Fatalf("built from codes, the graph holds %d floats in memory, spill file %v", len(g.vecs), g.spill != nil)
				}
				var buf bytes.Buffer
				if _, err := g.WriteTo(&buf); err != nil {
					t.Fatal(err)
				}
				return buf.Bytes()
			}
			if got, want := build(true), build(false); !bytes.Equal(got, want) {
				t.Errorf("the graph built after Reserve differs from the one built without it (%d and %d bytes)", len(got), len(want))
			}
		})
	}
}

func equalPtrs(a, b []uintptr) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReserveRefusesTooMany checks Reserve keeps Add's node limit and needs an open graph.
func TestReserveRefusesTooMany(t *testing.T) {
	g, err := New(4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Reserve(maxNodes + 1); err == nil {
		t.Error("Reserve past the node limit: no error")
	}
	g.Close()
	if err := g.Reserve(10); err != ErrClosed {
		t.Errorf("Reserve on a closed graph: %v, want ErrClosed", err)
	}
}

// TestReserveReadsMappedOnce: a build resuming from its checkpoint marks the mapped graph for
// repair and reserves the nodes still to come; the graph is then read into memory once, into
// arrays of their final size, rather than at its own size and then copied into larger ones
// (a resumed 10M build held both, 6.02 GB at its peak). Counted as the bytes allocated by
// MarkUnrepaired and Reserve together, from codes and from floats.
func TestReserveReadsMappedOnce(t *testing.T) {
	const dim, n, extra = 64, 12000, 4000
	keys, vecs := gaussianSet(n, dim, 13, 14)
	for _, build := range []string{BuildCodes, BuildFloat} {
		t.Run(build, func(t *testing.T) {
			opts := Options{Seed: 4, Build: build, SpillDir: t.TempDir()}
			g, err := New(dim, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Add(context.Background(), keys, vecs); err != nil {
				t.Fatal(err)
			}
			g = savedMapped(t, g, build, opts.SpillDir)
			defer g.Close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if err := g.MarkUnrepaired(); err != nil {
				t.Fatal(err)
			}
			if err := g.Reserve(extra); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			// What the graph must hold for n+extra nodes, and the fixed costs of reading it
			// in: eachVectors' 1 MiB buffer and the growth of the small per-node arrays.
			final := uint64(cap(g.vecs)*4 + cap(g.bcodes) + cap(g.brange)*4 + cap(g.level0)*4)
			if got, want := cap(g.level0), (n+extra)*g.stride; got != want {
				t.Fatalf("level-0 lists: capacity %d, want %d", got, want)
			}
			if slack := uint64(2 << 20); allocated > final+slack {
				t.Errorf("MarkUnrepaired and Reserve allocated %d bytes for arrays of %d (%d over, allowed %d): the mapped graph was read in at its size, then copied",
					allocated, final, allocated-final, slack)
			}
		})
	}
}

// savedMapped saves g, closes it and returns the file loaded back mapped, set to build as g
// was (a file does not keep Build): the graph a build going on from its checkpoint holds.
func savedMapped(t *testing.T, g *Graph, build, spillDir string) *Graph {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.hnsw")
	if err := g.Save(path); err != nil {
		t.Fatal(err)
	}
	g.Close()
	back, err := LoadWith(path, LoadOptions{Mapped: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := back.SetBuild(build, spillDir); err != nil {
		t.Fatal(err)
	}
	return back
}
