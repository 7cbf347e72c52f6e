package hnsw_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
)

func serialize(t testing.TB, g *hnsw.Graph) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := g.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestPersistenceRoundTrip(t *testing.T) {
	f := newFixture(t, 2000, 100, 32, hnsw.Options{Seed: 9, M: 12, EfSearch: 40})
	for _, k := range f.keys[:50] {
		f.graph.Delete(k)
	}
	path := filepath.Join(t.TempDir(), "dense.hnsw")
	if err := f.graph.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := hnsw.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Len() != f.graph.Len() || loaded.Live() != f.graph.Live() || loaded.Dim() != 32 {
		t.Fatalf("loaded Len/Live/Dim %d/%d/%d, want %d/%d/32", loaded.Len(), loaded.Live(), loaded.Dim(), f.graph.Len(), f.graph.Live())
	}
	if o := loaded.Options(); o.M != 12 || o.EfSearch != 40 || o.Seed != 9 || o.EfConstruction != hnsw.DefaultEfConstruction {
		t.Errorf("options not preserved: %+v", o)
	}
	for i, q := range f.ds.Queries {
		want, _ := f.graph.Search(q, 10, 0)
		got, _ := loaded.Search(q, 10, 0)
		if len(want) != 10 || !equalResults(got, want) {
			t.Fatalf("query %d: loaded graph returns %v, original %v", i, got, want)
		}
	}
	if loaded.Contains(f.keys[0]) || !loaded.Contains(f.keys[60]) {
		t.Error("tombstones not preserved")
	}
	// The loaded graph keeps growing: the same bytes result as adding to the original.
	extra := f.ds.Queries[:10]
	keys := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, g := range []*hnsw.Graph{f.graph, loaded} {
		if err := g.Add(context.Background(), keys, extra); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := loaded.Search(extra[3], 1, 0); len(got) != 1 || got[0].Key != 4 {
		t.Errorf("vector added after load not found: %v", got)
	}
	// Re-saving a loaded graph is byte-identical (save is deterministic).
	if a, b := serialize(t, f.graph), serialize(t, loaded); f.graph.Options().Workers == 1 && !bytes.Equal(a, b) {
		t.Error("re-serialised graphs differ")
	}
}

func equalResults(a, b []hnsw.Result) bool {
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

func TestCorruptionDetected(t *testing.T) {
	f := newFixture(t, 300, 1, 16, hnsw.Options{Seed: 2})
	good := serialize(t, f.graph)
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x10
		return b
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
		corrupt bool
	}{
		{"bad magic", flip(0), "not a Kairos HNSW file", false},
		{"bad version", flip(8), "unsupported format version", false},
		{"header bit flip", flip(20), "header checksum mismatch", true},
		{"vector bit flip", flip(200), "body checksum mismatch", true},
		{"list bit flip", flip(len(good) - 500), "body checksum mismatch", true},
		{"trailer bit flip", flip(len(good) - 1), "body checksum mismatch", true},
		{"empty", nil, "truncated", false},
		{"half header", good[:40], "truncated", false},
		{"truncated body", good[:len(good)/2], "truncated", false},
		{"missing checksum", good[:len(good)-2], "truncated", false},
		{"trailing garbage", append(bytes.Clone(good), 0), "padded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// bytes.Reader reports its size; onlyReader hides it so the streaming path is tested too.
			for _, r := range []io.Reader{bytes.NewReader(tc.data), onlyReader{bytes.NewReader(tc.data)}} {
				_, err := hnsw.Read(r)
				if err == nil {
					if _, ok := r.(onlyReader); ok && tc.name == "trailing garbage" {
						continue // a stream cannot know what follows the index
					}
					t.Fatalf("%T: accepted", r)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%T: error %q, want it to mention %q", r, err, tc.wantErr)
				}
				if tc.corrupt && !errors.Is(err, hnsw.ErrCorrupt) {
					t.Errorf("%T: error %q is not ErrCorrupt", r, err)
				}
			}
		})
	}
	// Through Load, the error names the file.
	path := filepath.Join(t.TempDir(), "x.hnsw")
	if err := os.WriteFile(path, good[:len(good)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hnsw.Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load of truncated file: %v", err)
	}
}

type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestSaveIsAtomic(t *testing.T) {
	f := newFixture(t, 200, 1, 8, hnsw.Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "g.hnsw")
	if err := f.graph.Save(path); err != nil {
		t.Fatal(err)
	}
	// Saving into a missing directory fails and leaves nothing behind.
	if err := f.graph.Save(filepath.Join(dir, "missing", "g.hnsw")); err == nil {
		t.Error("save into missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only g.hnsw (no temporary files)", len(entries))
	}
}

// SaveSum returns the size and sha256 of the file it wrote, for graphs built from floats and
// from codes (the indexer records them as the file's checksum without reading it back).
func TestSaveSumIsTheFilesSum(t *testing.T) {
	for _, build := range []string{"", hnsw.BuildCodes} {
		t.Run("build "+build, func(t *testing.T) {
			f := newFixture(t, 300, 1, 16, hnsw.Options{Build: build, SpillDir: t.TempDir()})
			path := filepath.Join(t.TempDir(), "g.hnsw")
			size, sum, err := f.graph.SaveSum(path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if size != int64(len(data)) || sum != sha256.Sum256(data) {
				t.Errorf("SaveSum: %d bytes, sha256 %x; the file has %d bytes, sha256 %x", size, sum, len(data), sha256.Sum256(data))
			}
		})
	}
}

// FuzzRead feeds mutated index files to Read: it must return an error or a graph that can be
// searched, never panic.
func FuzzRead(f *testing.F) {
	g, _ := hnsw.New(4, hnsw.Options{M: 4, EfConstruction: 8, Seed: 1})
	vecs := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 1}, {1, 0, 1, 0}}
	if err := g.Add(context.Background(), []uint64{1, 2, 3, 4, 5, 6}, vecs); err != nil {
		f.Fatal(err)
	}
	g.Delete(3)
	var buf bytes.Buffer
	g.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:100])
	f.Add([]byte("KAIHNSW\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := hnsw.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		g.Search([]float32{1, 0, 0, 0}, 3, 10)
		if g.Dim() == 4 {
			g.Add(context.Background(), []uint64{99}, [][]float32{{0, 0, 0, 1}})
		}
	})
}

// FuzzReadValidChecksums mutates an index file and then recomputes both checksums, so the
// mutations reach the structural checks (neighbour ids, counts, levels, tombstones) that random
// corruption never gets past the CRC to exercise. Read must reject or return a searchable graph.
func FuzzReadValidChecksums(f *testing.F) {
	g, _ := hnsw.New(4, hnsw.Options{M: 2, EfConstruction: 4, Seed: 3})
	vecs := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 1}, {1, 0, 1, 0}, {1, 1, 1, 1}}
	if err := g.Add(context.Background(), []uint64{1, 2, 3, 4, 5, 6, 7}, vecs); err != nil {
		f.Fatal(err)
	}
	g.Delete(2)
	var buf bytes.Buffer
	g.WriteTo(&buf)
	good := buf.Bytes()
	f.Add(good, uint16(200), byte(0xff))
	f.Add(good, uint16(300), byte(0x07))
	f.Add(good, uint16(60), byte(0x01))
	f.Fuzz(func(t *testing.T, data []byte, off uint16, x byte) {
		data = bytes.Clone(data)
		if len(data) < 84 {
			return
		}
		if int(off) < len(data)-4 {
			data[off] ^= x
		}
		tab := crc32.MakeTable(crc32.Castagnoli)
		binary.LittleEndian.PutUint32(data[76:], crc32.Checksum(data[:76], tab))
		binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[80:len(data)-4], tab))
		g, err := hnsw.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if g.Dim() == 4 {
			g.Search([]float32{1, 0, 0, 0}, 3, 10)
			g.Add(context.Background(), []uint64{99}, [][]float32{{0, 0, 0, 1}})
			g.Search([]float32{0, 0, 0, 1}, 3, 10)
		}
	})
}

// TestBinaryCodesPersist: a graph with binary codes is written as version 3 and read back, in
// memory and mapped, with its Codes option; a graph without them still writes version 2,
// byte for byte what "int8" writes; SetCodes switches between the two; a header whose codes
// field disagrees with its version is corrupt.
func TestBinaryCodesPersist(t *testing.T) {
	bin := newFixture(t, 700, 1, 40, hnsw.Options{Seed: 3, Workers: 1, Codes: hnsw.CodesBinary})
	plain := newFixture(t, 700, 1, 40, hnsw.Options{Seed: 3, Workers: 1})
	named := newFixture(t, 700, 1, 40, hnsw.Options{Seed: 3, Workers: 1, Codes: hnsw.CodesInt8})
	pb, bb := serialize(t, plain.graph), serialize(t, bin.graph)
	if !bytes.Equal(pb, serialize(t, named.graph)) {
		t.Error(`Codes "int8" writes other bytes than the default`)
	}
	if v := binary.LittleEndian.Uint32(pb[8:]); v != 2 {
		t.Errorf("int8 graph written as version %d, want 2", v)
	}
	if v := binary.LittleEndian.Uint32(bb[8:]); v != 3 {
		t.Errorf("binary graph written as version %d, want 3", v)
	}
	g, err := hnsw.Read(bytes.NewReader(bb))
	if err != nil {
		t.Fatal(err)
	}
	if g.Options().Codes != hnsw.CodesBinary {
		t.Errorf("read back with codes %q", g.Options().Codes)
	}
	if !bytes.Equal(serialize(t, g), bb) {
		t.Error("a binary graph read in memory re-serialises differently")
	}
	path := filepath.Join(t.TempDir(), "b.hnsw")
	if err := os.WriteFile(path, bb, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Mapped() || m.Options().Codes != hnsw.CodesBinary {
		t.Errorf("mapped %v, codes %q", m.Mapped(), m.Options().Codes)
	}
	// SetCodes re-saves a graph with the other codes, byte for byte what a build with them writes.
	if err := plain.graph.SetCodes(hnsw.CodesBinary); err != nil || !bytes.Equal(serialize(t, plain.graph), bb) {
		t.Errorf("SetCodes(binary): %v, or other bytes than a binary build", err)
	}
	if err := plain.graph.SetCodes(hnsw.CodesInt8); err != nil || !bytes.Equal(serialize(t, plain.graph), pb) {
		t.Errorf("SetCodes(int8): %v, or other bytes than an int8 build", err)
	}
	if err := m.SetCodes(hnsw.CodesInt8); err == nil {
		t.Error("SetCodes on a mapped graph accepted")
	}
	if err := plain.graph.SetCodes("int4"); err == nil {
		t.Error("SetCodes(int4) accepted")
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	for _, tc := range []struct {
		name           string
		data           []byte
		version, codes uint32
	}{{"version 2 with binary codes", pb, 2, 1}, {"version 3 without", bb, 3, 0}, {"unknown codes", bb, 3, 2}} {
		d := bytes.Clone(tc.data)
		binary.LittleEndian.PutUint32(d[8:], tc.version)
		binary.LittleEndian.PutUint32(d[72:], tc.codes)
		binary.LittleEndian.PutUint32(d[76:], crc32.Checksum(d[:76], tab))
		if _, err := hnsw.Read(bytes.NewReader(d)); !errors.Is(err, hnsw.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}
