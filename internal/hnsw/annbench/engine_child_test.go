package annbench

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// fakeSearcher answers every query with ids 0 to k-1 and counts its closes.
type fakeSearcher struct{ closes *int }

func (f fakeSearcher) search(q []float32, k int, point map[string]float64) ([]uint64, error) {
	ids := make([]uint64, k)
	for i := range ids {
		ids[i] = uint64(i)
	}
	return ids, nil
}

func (f fakeSearcher) Close() error { *f.closes++; return nil }

// TestServeClosesBeforeListingFiles: the serve phase closes its index, once, before it lists
// the index's files, because listing may open the index a second time (the inverted file's
// does) and two open copies would double the peak memory the phase reports.
func TestServeClosesBeforeListingFiles(t *testing.T) {
	ds := Generate(50, 3, 8, 1)
	gt := make([][]uint64, 3)
	for i := range gt {
		gt[i] = []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	}
	data, dir := t.TempDir(), t.TempDir()
	if err := Dump(data, ds, gt, Config{Efs: []int{16}, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	d, err := openDump(data)
	if err != nil {
		t.Fatal(err)
	}
	indexFile := filepath.Join(dir, "index.bin")
	if err := os.WriteFile(indexFile, make([]byte, 1234), 0o644); err != nil {
		t.Fatal(err)
	}
	closes, closesAtListing := 0, -1
	e := kairosIndex{
		name: "fake", knob: "ef", settings: []string{"only"},
		open: func(string, string) (kairosSearcher, error) { return fakeSearcher{&closes}, nil },
		files: func(string, string) []string {
			closesAtListing = closes
			return []string{indexFile}
		},
	}
	r, w := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- serveKairos(context.Background(), e, "only", d, dir, []map[string]float64{{"ef": 16}}, 1, json.NewEncoder(w))
		w.Close()
	}()
	dec := json.NewDecoder(r)
	var last map[string]any
	for dec.More() {
		last = nil
		if err := dec.Decode(&last); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if closesAtListing != 1 {
		t.Errorf("the index was closed %d times when its files were listed, want once", closesAtListing)
	}
	if closes != 1 {
		t.Errorf("closed %d times, want once", closes)
	}
	if last["type"] != "serve" || last["index_bytes"] != float64(1234) {
		t.Errorf("last line %v, want the serve line with 1234 index bytes", last)
	}
}
