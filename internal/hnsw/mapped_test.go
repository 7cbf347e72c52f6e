package hnsw_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

// TestMappedMatchesMemory saves a graph with tombstones, opens it mapped and checks every
// operation against the in-memory graph: exact scores, recall, deleted keys, filters, exact
// search, vectors, re-saving, then growing it (which reads it into memory) and closing.
func TestMappedMatchesMemory(t *testing.T) {
	for _, codes := range []string{hnsw.CodesInt8, hnsw.CodesBinary} {
		t.Run(codes, func(t *testing.T) { testMappedMatchesMemory(t, codes) })
	}
}

func testMappedMatchesMemory(t *testing.T, codes string) {
	f := newFixture(t, 3000, 100, 48, hnsw.Options{Seed: 5, M: 12, Codes: codes})
	for _, k := range f.keys[:100] {
		f.graph.Delete(k)
		f.exact.Delete(k)
	}
	path := filepath.Join(t.TempDir(), "dense.hnsw")
	if err := f.graph.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		rescore       int
		minRec        float64
		binaryRescore string // ignored by int8 codes
	}{{"rescore default", 0, 0.95, ""}, {"rescore k", 10, 0.93, ""}, {"rescore all", 1000, 0.95, ""},
		{"binary rescored with floats", 0, 0.95, hnsw.RescoreFloat}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true, Rescore: tc.rescore, BinaryRescore: tc.binaryRescore})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !m.Mapped() || m.Len() != f.graph.Len() || m.Live() != f.graph.Live() {
				t.Fatalf("mapped %v, Len/Live %d/%d, want true, %d/%d", m.Mapped(), m.Len(), m.Live(), f.graph.Len(), f.graph.Live())
			}
			mf := &fixture{ds: f.ds, keys: f.keys, graph: m, exact: f.exact}
			minRec := tc.minRec
			if codes == hnsw.CodesBinary {
				// 48 bits order candidates coarsely: measured 0.888 (int8 walk: above 0.95).
				minRec -= 0.08
			}
			if r := mf.recall(t, 10, 64); r < minRec {
				t.Errorf("mapped recall@10 at ef 64 = %.4f, want >= %.2f", r, minRec)
			}
			for i, q := range f.ds.Queries[:20] {
				got, err := m.Search(q, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range got {
					v, ok := f.graph.Vector(r.Key)
					if !ok {
						t.Fatalf("query %d: mapped search returned deleted or unknown key %d", i, r.Key)
					}
					want, _ := hnsw.NewExact(48, hnsw.Cosine)
					want.Add([]uint64{r.Key}, [][]float32{v})
					w, _ := want.Search(q, 1)
					if w[0].Score != r.Score {
						t.Fatalf("query %d key %d: mapped score %v, float score %v (not rescored)", i, r.Key, r.Score, w[0].Score)
					}
				}
				odd := func(k uint64) bool { return k%2 == 1 }
				fr, err := m.SearchFiltered(q, 10, 64, odd)
				if err != nil || len(fr) != 10 {
					t.Fatalf("query %d: filtered search %d results, %v", i, len(fr), err)
				}
				for _, r := range fr {
					if !odd(r.Key) {
						t.Fatalf("query %d: filtered search returned key %d", i, r.Key)
					}
				}
				we, _ := f.graph.SearchExactFiltered(q, 10, odd)
				ge, err := m.SearchExactFiltered(q, 10, odd)
				if err != nil || !equalResults(ge, we) {
					t.Fatalf("query %d: mapped exact %v (%v), in memory %v", i, ge, err, we)
				}
			}
			if v, ok := m.Vector(f.keys[200]); !ok || !equalVec(v, must(f.graph.Vector(f.keys[200]))) {
				t.Error("Vector of a mapped graph differs from the in-memory one")
			}
			if _, ok := m.Vector(f.keys[0]); ok {
				t.Error("Vector of a deleted key found")
			}
			if a, b := serialize(t, f.graph), serialize(t, m); !bytes.Equal(a, b) {
				t.Error("a mapped graph re-serialises differently from the in-memory one")
			}
			// Delete works mapped; Add reads the graph into memory first.
			if !m.Delete(f.keys[300]) || m.Contains(f.keys[300]) {
				t.Error("Delete on a mapped graph")
			}
			if err := m.Add(context.Background(), []uint64{7}, [][]float32{f.ds.Queries[0]}); err != nil {
				t.Fatal(err)
			}
			if m.Mapped() {
				t.Error("graph still mapped after Add")
			}
			if got, _ := m.Search(f.ds.Queries[0], 1, 0); len(got) != 1 || got[0].Key != 7 {
				t.Errorf("vector added after mapped load not found: %v", got)
			}
			m.Close()
			if _, err := m.Search(f.ds.Queries[0], 1, 0); !errors.Is(err, hnsw.ErrClosed) {
				t.Errorf("search after Close: %v, want ErrClosed", err)
			}
		})
	}
}

func must(v []float32, ok bool) []float32 { return v }

func equalVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMappedLoadErrors: damaged files fail with an error naming the file, mapped as in memory.
func TestMappedLoadErrors(t *testing.T) {
	f := newFixture(t, 500, 1, 16, hnsw.Options{Seed: 2})
	good := serialize(t, f.graph)
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x10
		return b
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, wantErr string
		data          []byte
	}{
		{"codes bit flip", "body checksum mismatch", flip(len(good) - 4 - 500*16*4 - 10)},
		{"padding bit flip", "body checksum mismatch", flip(100)},
		{"vector bit flip", "body checksum mismatch", flip(len(good) - 8)},
		{"truncated", "truncated", good[:len(good)-4096]},
		{"padded", "padded", append(bytes.Clone(good), 0)},
		{"empty", "truncated", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".hnsw")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, mapped := range []bool{false, true} {
				_, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: mapped})
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Errorf("mapped %v: error %v, want one naming %s and saying %q", mapped, err, path, tc.wantErr)
				}
			}
		})
	}
}

// FuzzLoadMapped mutates a version-2 file, recomputes both checksums (so mutations reach the
// structural checks), and opens it mapped: it must be rejected with an error naming the file,
// or be searchable, exactly searchable and extendable without a panic.
func FuzzLoadMapped(f *testing.F) {
	g, _ := hnsw.New(4, hnsw.Options{M: 2, EfConstruction: 4, Seed: 3})
	vecs := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 1}, {1, 0, 1, 0}, {1, 1, 1, 1}}
	if err := g.Add(context.Background(), []uint64{1, 2, 3, 4, 5, 6, 7}, vecs); err != nil {
		f.Fatal(err)
	}
	g.Delete(2)
	var buf bytes.Buffer
	g.WriteTo(&buf)
	good := buf.Bytes()
	for _, off := range []uint32{100, 4096, 2*4096 + 1, 3 * 4096, 3*4096 + 4, 5 * 4096, 6 * 4096, 8*4096 + 3} {
		f.Add(good, off, byte(0xff))
	}
	f.Add(good[:5000], uint32(0), byte(0))
	// The same graph with binary codes (version 3: bit thresholds and bits before the vectors).
	if err := g.SetCodes(hnsw.CodesBinary); err != nil {
		f.Fatal(err)
	}
	var bbuf bytes.Buffer // not buf: the seeds above still hold its bytes
	g.WriteTo(&bbuf)
	goodBin := bbuf.Bytes()
	for _, off := range []uint32{8, 72, 9 * 4096, 10*4096 + 1, 11 * 4096} {
		f.Add(goodBin, off, byte(0xff))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, off uint32, x byte) {
		data = bytes.Clone(data)
		if len(data) >= 84 {
			if int(off) < len(data)-4 {
				data[off] ^= x
			}
			tab := crc32.MakeTable(crc32.Castagnoli)
			binary.LittleEndian.PutUint32(data[76:], crc32.Checksum(data[:76], tab))
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[80:len(data)-4], tab))
		}
		path := filepath.Join(dir, "fuzz.hnsw")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true})
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		defer m.Close()
		if m.Dim() == 4 {
			m.Search([]float32{1, 0, 0, 0}, 3, 10)
			m.SearchExact([]float32{1, 0, 0, 0}, 3)
			m.Add(context.Background(), []uint64{99}, [][]float32{{0, 0, 0, 1}})
			m.Search([]float32{0, 0, 0, 1}, 3, 10)
		}
	})
}
