package hnsw

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A graph file whose checksums hold but whose level-l list names a node below level l is
// corrupt: a search that stepped there read that node's level-l list past the end of the
// upper lists and panicked. Read and a mapped load refuse it, naming both nodes.
func TestReadRefusesLinkBelowItsLevel(t *testing.T) {
	const n = 400
	g := randomGraph(t, n, Options{M: 2, EfConstruction: 8, Seed: 5, Workers: 1}, 1)
	// A level-1 list with a neighbour, and a node of level 0 to put in its place.
	from, low := -1, -1
	for id := range n {
		if g.levels[id] >= 1 && from < 0 && g.list(uint32(id), 1)[0] > 0 {
			from = id
		}
		if g.levels[id] == 0 && low < 0 {
			low = id
		}
	}
	if from < 0 || low < 0 {
		t.Fatalf("fixture: no level-1 list (%d) or level-0 node (%d)", from, low)
	}
	g.list(uint32(from), 1)[1] = uint32(low)
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	_, err := Read(bytes.NewReader(buf.Bytes()))
	want := "links to node"
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "whose level is 0") {
		t.Fatalf("Read: %v; want corrupt, a link below its level", err)
	}
	path := filepath.Join(t.TempDir(), "g.hnsw")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := LoadWith(path, LoadOptions{Mapped: true}); err == nil {
		m.Close()
		t.Fatal("LoadWith mapped accepted it")
	} else if !strings.Contains(err.Error(), "whose level is 0") {
		t.Fatalf("LoadWith mapped: %v", err)
	}
}

// A stream does not tell Read its size, so a header claiming the most nodes the format allows
// cannot be refused before the sections are read; Read must then fail as truncated having
// allocated about what the stream held, not the 16 GB of keys the header claims.
func TestReadStreamWithInflatedHeader(t *testing.T) {
	g := randomGraph(t, 300, Options{M: 4, EfConstruction: 16, Seed: 1, Workers: 1}, 3)
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	var h header
	if _, err := binary.Decode(data[:headerSize], binary.LittleEndian, &h); err != nil {
		t.Fatal(err)
	}
	h.Nodes = maxNodes
	hb, err := binary.Append(nil, binary.LittleEndian, &h)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(hb[headerSize-4:], crc32.Checksum(hb[:headerSize-4], crcTable))
	copy(data, hb)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Read(onlyReader{bytes.NewReader(data)})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("Read of a stream with %d nodes claimed: %v; want truncated", h.Nodes, err)
	}
	// What is read is under 100 KB; the first chunk of keys is 8 MB, so 64 MB leaves a margin
	// for the test's own allocations and none for the claim.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("Read allocated %d MB for a %d-byte stream", got>>20, len(data))
	}
	// The same bytes from a reader that tells its size are refused before any section.
	if _, err := Read(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "header says") {
		t.Errorf("Read of the sized input: %v; want the size mismatch", err)
	}
}

// onlyReader hides a reader's Len, as a pipe or a network stream would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// randomGraph is a graph of n 8-dimensional vectors drawn uniformly from [0, 1) with seed,
// keyed 1 to n.
func randomGraph(t *testing.T, n int, opts Options, seed uint64) *Graph {
	t.Helper()
	g, err := New(8, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	keys := make([]uint64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = uint64(i + 1)
		vecs[i] = make([]float32, 8)
		for j := range vecs[i] {
			vecs[i][j] = rng.Float32()
		}
	}
	if err := g.Add(context.Background(), keys, vecs); err != nil {
		t.Fatal(err)
	}
	return g
}
