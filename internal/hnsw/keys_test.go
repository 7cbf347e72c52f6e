package hnsw

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keyOp is one step of TestKeyIndex: an Add of keys, or a Delete of one key.
type keyOp struct {
	add []uint64
	del uint64
}

func reversed(s []uint64) []uint64 {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func adds(keys ...uint64) keyOp { return keyOp{add: keys} }
func del(key uint64) keyOp      { return keyOp{del: key} }

func seq(from, to uint64) []uint64 {
	var s []uint64
	for k := from; k < to; k++ {
		s = append(s, k)
	}
	return s
}

// TestKeyIndex runs sequences of adds and deletes, keys in and out of node order, and checks
// every key's presence, vector and search results against the keys a map says are live,
// in memory and after a save and a load (in memory and mapped); and that keys equal to their
// node ids take no map entry.
func TestKeyIndex(t *testing.T) {
	tests := []struct {
		name  string
		ops   []keyOp
		moved int // map entries after the ops
	}{
		{"in node order", []keyOp{adds(seq(0, 300)...)}, 0},
		{"in order, two batches", []keyOp{adds(seq(0, 150)...), adds(seq(150, 300)...)}, 0},
		{"reversed", []keyOp{adds(reversed(seq(0, 300))...)}, 300},
		{"offset", []keyOp{adds(seq(1000, 1300)...)}, 300},
		{"delete in order", []keyOp{adds(seq(0, 300)...), del(7), del(299), del(0)}, 0},
		{"delete, add again", []keyOp{adds(seq(0, 300)...), del(7), adds(7), del(8)}, 1},
		{"added again, deleted again", []keyOp{adds(seq(0, 300)...), del(7), adds(7), del(7)}, 0},
		{"key of a later node", []keyOp{adds(seq(0, 100)...), adds(150), adds(seq(101, 150)...), adds(100)}, 2},
		{"a key taken by another node", []keyOp{adds(0, 2, 1), del(2), adds(seq(3, 300)...), adds(2)}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(8, Options{M: 4, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			vecs := map[uint64][]float32{}
			live := map[uint64]bool{}
			for _, op := range tt.ops {
				if op.add == nil {
					if !g.Delete(op.del) {
						t.Fatalf("Delete(%d) of a live key: false", op.del)
					}
					delete(live, op.del)
					continue
				}
				var vs [][]float32
				for _, k := range op.add {
					v := make([]float32, 8)
					for i := range v {
						v[i] = float32(r.NormFloat64())
					}
					vecs[k], live[k] = v, true
					vs = append(vs, v)
				}
				if err := g.Add(context.Background(), op.add, vs); err != nil {
					t.Fatal(err)
				}
			}
			if len(g.moved) != tt.moved {
				t.Errorf("%d keys in the map, want %d", len(g.moved), tt.moved)
			}
			checkKeys(t, "in memory", g, live, vecs)
			path := filepath.Join(t.TempDir(), "g.hnsw")
			if err := g.Save(path); err != nil {
				t.Fatal(err)
			}
			for _, mapped := range []bool{false, true} {
				h, err := LoadWith(path, LoadOptions{Mapped: mapped})
				if err != nil {
					t.Fatal(err)
				}
				checkKeys(t, fmt.Sprintf("loaded (mapped %v)", mapped), h, live, vecs)
				if len(h.moved) != tt.moved {
					t.Errorf("loaded (mapped %v): %d keys in the map, want %d", mapped, len(h.moved), tt.moved)
				}
				h.Close()
			}
		})
	}
}

// checkKeys compares g with the live keys: presence and vectors of every key up to past the
// largest, a second Add of a live key refused, and the exact search returning only live keys.
func checkKeys(t *testing.T, how string, g *Graph, live map[uint64]bool, vecs map[uint64][]float32) {
	t.Helper()
	top := uint64(0)
	for k := range vecs {
		top = max(top, k)
	}
	for k := range top + 3 {
		if g.Contains(k) != live[k] {
			t.Errorf("%s: Contains(%d) = %v, want %v", how, k, g.Contains(k), live[k])
		}
		v, ok := g.Vector(k)
		if ok != live[k] {
			t.Errorf("%s: Vector(%d) found %v, want %v", how, k, ok, live[k])
			continue
		}
		if ok && dot(v, normalized(vecs[k])) < 0.999 {
			t.Errorf("%s: Vector(%d) is another key's vector", how, k)
		}
	}
	if g.Live() != len(live) {
		t.Errorf("%s: Live %d, want %d", how, g.Live(), len(live))
	}
	for k := range live {
		res, err := g.SearchExact(vecs[k], 1)
		if err != nil || len(res) != 1 || res[0].Key != k {
			t.Errorf("%s: exact search for key %d's vector: %v %+v", how, k, err, res)
		}
	}
	res, err := g.SearchExact([]float32{1, 1, 1, 1, 1, 1, 1, 1}, len(live)+5)
	if err != nil || len(res) != len(live) {
		t.Fatalf("%s: exact search of everything: %d hits, %v; want %d", how, len(res), err, len(live))
	}
	for _, h := range res {
		if !live[h.Key] {
			t.Errorf("%s: search returned key %d, not live", how, h.Key)
		}
	}
}

func normalized(v []float32) []float32 {
	out := make([]float32, len(v))
	normalizeInto(out, v)
	return out
}

// TestLoadRefusesKeyLiveTwice: a file in which two live nodes hold one key is corrupt, whether
// the key is the id of the first node, of the second, or of neither.
func TestLoadRefusesKeyLiveTwice(t *testing.T) {
	for _, tt := range []struct {
		keys []uint64
		msg  string
	}{
		{[]uint64{0, 1, 1}, "key 1 is live on nodes 1 and 2"},
		{[]uint64{0, 2, 2}, "key 2 is live on nodes 1 and 2"},
		{[]uint64{5, 1, 5}, "key 5 is live on nodes 0 and 2"},
		{[]uint64{2, 1, 2}, "key 2 is live on nodes 0 and 2"},
	} {
		t.Run(fmt.Sprint(tt.keys), func(t *testing.T) {
			g, err := New(4, Options{M: 4})
			if err != nil {
				t.Fatal(err)
			}
			vs := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}
			if err := g.Add(context.Background(), []uint64{10, 11, 12}, vs); err != nil {
				t.Fatal(err)
			}
			copy(g.keys, tt.keys) // as a damaged file would hold them
			path := filepath.Join(t.TempDir(), "g.hnsw")
			if err := g.Save(path); err != nil {
				t.Fatal(err)
			}
			for _, mapped := range []bool{false, true} {
				_, err := LoadWith(path, LoadOptions{Mapped: mapped})
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("mapped %v: %v, want %s", mapped, err, tt.msg)
				}
			}
		})
	}
}
