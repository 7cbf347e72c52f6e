package indexer

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

func TestDocTableRoundTrip(t *testing.T) {
	tbl := map[string]*doctable.Entry{
		"a":   {Hash: doctable.ContentHash(&corpus.Document{ID: "a", Title: "A", Sections: []corpus.Section{{Text: "x"}}}), Keys: []uint32{0, 1, 7}},
		"ü/2": {Hash: doctable.ContentHash(&corpus.Document{ID: "ü/2"}), Keys: nil},
	}
	got, err := doctable.Parse(encodeDocTable(tbl))
	if err != nil {
		t.Fatal(err)
	}
	for id, e := range tbl {
		g := got[id]
		if g == nil || g.Hash != e.Hash || len(g.Keys) != len(e.Keys) || (len(e.Keys) > 0 && !reflect.DeepEqual(g.Keys, e.Keys)) {
			t.Errorf("%s: %+v, want %+v", id, g, e)
		}
	}
	// The hash sees content, not the source label; and field boundaries matter.
	d1 := corpus.Document{Title: "ab", Sections: []corpus.Section{{Text: "c"}}, Source: "x"}
	d2 := corpus.Document{Title: "ab", Sections: []corpus.Section{{Text: "c"}}, Source: "y"}
	d3 := corpus.Document{Title: "a", Sections: []corpus.Section{{Text: "bc"}}}
	if doctable.ContentHash(&d1) != doctable.ContentHash(&d2) || doctable.ContentHash(&d1) == doctable.ContentHash(&d3) {
		t.Error("content hash: source must not count, field boundaries must")
	}
}

// FuzzParseDocTable: a damaged document table is an error, never a panic, and what parses
// re-encodes to the same bytes.
func FuzzParseDocTable(f *testing.F) {
	f.Add(encodeDocTable(map[string]*doctable.Entry{"x": {Keys: []uint32{3, 4}}, "y": {Keys: []uint32{9}}}))
	f.Add(encodeDocTable(map[string]*doctable.Entry{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		tbl, err := doctable.Parse(b)
		if err != nil {
			return
		}
		again, err := doctable.Parse(encodeDocTable(tbl))
		if err != nil || len(again) != len(tbl) {
			t.Fatalf("re-encoding failed: %v", err)
		}
	})
}

// TestFormatsKeepTheirBytes: moving the document table and the tombstones into
// internal/framing kept their version 1 layout; these bytes were written by the code before it.
func TestFormatsKeepTheirBytes(t *testing.T) {
	ts := &tombstones.Set{}
	for _, k := range []uint32{0, 5, 64, 1000} {
		ts.Add(k)
	}
	var h doctable.Hash
	for i := range h {
		h[i] = byte(i)
	}
	doc := map[string]*doctable.Entry{"a": {Hash: h, Keys: []uint32{0, 1, 7}}, "ü/2": {Hash: h}}
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"tombstones", ts.Encode(), "4b544d42010000000400000000000000000000000500000040000000e80300007121b7874b544d42"},
		{"document table", encodeDocTable(doc), "4b444f430100000002000000000000000161000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0300010604c3bc2f32000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f004f6a0da14b444f43"},
	}
	for _, tc := range tests {
		if got := hex.EncodeToString(tc.got); got != tc.want {
			t.Errorf("%s: wrote %s\nwant          %s", tc.name, got, tc.want)
		}
	}
	tomb := filepath.Join(t.TempDir(), tombstones.FileName)
	if err := os.WriteFile(tomb, mustHex(t, tests[0].want), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tombstones.Read(tomb); err != nil {
		t.Errorf("reading version 1 tombstones: %v", err)
	}
	if _, err := doctable.Parse(mustHex(t, tests[1].want)); err != nil {
		t.Errorf("reading version 1 document table: %v", err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDenseInfoJSON: the manifest's dense section keeps its field names now that it holds
// hnsw.Options and modelid.Identity themselves (the graph's Metric and Workers stay out).
func TestDenseInfoJSON(t *testing.T) {
	d := DenseInfo{
		Model:   ModelIdentity{Name: "minilm", ONNXSHA256: "ab12", Dim: 384, Pooling: "mean", Normalize: true, MaxSeqLen: 256, QueryPrefix: "query: "},
		HNSW:    hnsw.Options{M: 16, EfConstruction: 200, EfSearch: 64, Seed: 1, Metric: hnsw.Dot, Workers: 2},
		Vectors: 7,
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"model":{"name":"minilm","onnx_sha256":"ab12","dim":384,"pooling":"mean","normalize":true,"max_seq_len":256,"query_prefix":"query: "},` +
		`"hnsw":{"m":16,"ef_construction":200,"ef_search":64,"seed":1},"vectors":7}`
	if string(b) != want {
		t.Errorf("DenseInfo JSON\n got %s\nwant %s", b, want)
	}
}

// encodeDocTable is the document table t as doctable.WriteTo writes it.
func encodeDocTable(t map[string]*doctable.Entry) []byte {
	var b bytes.Buffer
	if err := doctable.WriteTo(&b, t); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	return b.Bytes()
}

// TestDocTableStreamedInChunks round-trips a table larger than the writer's 4 KiB chunks
// and its 64 KiB buffer, so that every flush path writes what the parser reads back.
func TestDocTableStreamedInChunks(t *testing.T) {
	tbl := map[string]*doctable.Entry{}
	for i := range 5000 {
		id := fmt.Sprintf("doc-%05d", i)
		tbl[id] = &doctable.Entry{Hash: doctable.ContentHash(&corpus.Document{ID: id, Title: id}), Keys: []uint32{uint32(3 * i), uint32(3*i + 1)}}
	}
	b := encodeDocTable(tbl)
	if len(b) < 1<<17 {
		t.Fatalf("table of %d bytes does not cross the 64 KiB buffer twice", len(b))
	}
	got, err := doctable.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(tbl) {
		t.Fatalf("%d documents back, want %d", len(got), len(tbl))
	}
	for id, e := range tbl {
		if g := got[id]; g == nil || g.Hash != e.Hash || !reflect.DeepEqual(g.Keys, e.Keys) {
			t.Fatalf("%s: %+v, want %+v", id, g, e)
		}
	}
}
