package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/modelid"
)

func TestGenerationNames(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"g-000003", 3, true}, {"g-1234567", 1234567, true}, {"g-000000", 0, false}, {"g--1", 0, false},
		{"g-", 0, false}, {"h-000001", 0, false}, {"g-000001.tmp", 0, false}, {"", 0, false},
	} {
		if n, ok := ParseGeneration(c.name); n != c.n && c.ok || ok != c.ok {
			t.Errorf("ParseGeneration(%q) = %d, %v", c.name, n, ok)
		}
	}
	if n, ok := ParseGeneration(GenerationName(42)); GenerationName(42) != "g-000042" || n != 42 || !ok {
		t.Errorf("GenerationName(42) = %q", GenerationName(42))
	}
}

func TestCurrent(t *testing.T) {
	dir := t.TempDir()
	if _, err := Current(dir); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("no CURRENT: %v", err)
	}
	if err := WriteCurrent(dir, 2); err != nil {
		t.Fatal(err)
	}
	var de *backend.DamagedError
	if _, err := Current(dir); !errors.As(err, &de) || de.Path != filepath.Join(dir, CurrentFileName) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("CURRENT naming a missing generation: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, GenerationName(2)), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Current(dir); err != nil || got != filepath.Join(dir, "g-000002") {
		t.Errorf("Current = %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, CurrentFileName), []byte("../etc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Current(dir); !errors.As(err, &de) || !strings.Contains(err.Error(), "not a generation") {
		t.Errorf("CURRENT naming no generation: %v", err)
	}
}

// A directory without CURRENT says why: it does not exist (and which index beside it was
// likely meant), or a build has checkpointed there but not committed.
func TestCurrentSaysWhyThereIsNoIndex(t *testing.T) {
	root := t.TempDir()
	live := filepath.Join(root, "sf.idx")
	if err := os.MkdirAll(filepath.Join(live, GenerationName(1)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteCurrent(live, 1); err != nil {
		t.Fatal(err)
	}
	notIndex := filepath.Join(root, "sf.idy") // a directory, but no index: never suggested
	building := filepath.Join(root, "building.idx")
	for _, d := range []string{notIndex, building} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(building, CheckpointFileName), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want string
	}{
		{filepath.Join(root, "sf.ix"), filepath.Join(root, "sf.ix") + ": no index: no such directory (did you mean " + live + "?)"},
		{filepath.Join(root, "sfidx"), filepath.Join(root, "sfidx") + ": no index: no such directory (did you mean " + live + "?)"},
		{filepath.Join(root, "enwiki.idx"), filepath.Join(root, "enwiki.idx") + ": no index: no such directory"},
		{notIndex, notIndex + ": no index (no CURRENT file)"},
		{building, building + ": no index yet: a build has checkpointed but not committed (one in progress, or one interrupted, which kairos index --resume with the same inputs continues)"},
	}
	for _, tc := range tests {
		_, err := Current(tc.dir)
		var ni *NoIndexError
		if !errors.Is(err, ErrNoIndex) || !errors.As(err, &ni) || err.Error() != tc.want {
			t.Errorf("Current(%s) = %v\nwant %s", filepath.Base(tc.dir), err, tc.want)
		}
	}
	// A relative path is answered relative too.
	t.Chdir(root)
	if _, err := Current("sf.ix"); err == nil || err.Error() != "sf.ix: no index: no such directory (did you mean sf.idx?)" {
		t.Errorf("relative: %v", err)
	}
}

func sampleCheckpoint() *Checkpoint {
	return &Checkpoint{
		Generation: "g-000004", Position: Position{Input: 1, Docs: 300}, Inputs: sample().Inputs,
		Options: BuildOptions{MaxWords: 100, BatchSize: 100, Analyzer: Analyzer}, SkipBad: true,
		Model: &modelid.Identity{Name: "m", Dim: 8}, HNSW: &hnsw.Options{M: 16, Seed: 1},
		Embedding: &EmbedPosition{LexicalGeneration: 3, NextKey: 77},
	}
}

func TestCheckpointFile(t *testing.T) {
	dir := t.TempDir()
	if c, err := ReadCheckpoint(dir); c != nil || err != nil {
		t.Fatalf("no checkpoint: %v %v", c, err)
	}
	want := sampleCheckpoint()
	if err := WriteCheckpoint(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpoint(dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; wrote %+v", got, err, want)
	}
	if err := RemoveCheckpoint(dir); err != nil {
		t.Fatal(err)
	}
	if c, err := ReadCheckpoint(dir); c != nil || err != nil {
		t.Errorf("after RemoveCheckpoint: %v %v", c, err)
	}
	if err := RemoveCheckpoint(dir); err != nil {
		t.Errorf("removing no checkpoint: %v", err)
	}
}

func TestParseCheckpointRefuses(t *testing.T) {
	good, err := sampleCheckpoint().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	noGen := sampleCheckpoint()
	noGen.Generation = "CURRENT"
	badName, _ := noGen.Marshal()
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not a checkpoint"},
		{"truncated", good[:len(good)-20], "not a checkpoint"},
		{"edited", []byte(strings.Replace(string(good), `"docs": 300`, `"docs": 301`, 1)), "checksum mismatch"},
		{"names no generation", badName, "not a generation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCheckpoint(c.b, "idx/CHECKPOINT")
			var de *backend.DamagedError
			if !errors.As(err, &de) || de.Path != "idx/CHECKPOINT" || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want a DamagedError naming idx/CHECKPOINT saying %q", err, c.want)
			}
		})
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	good, err := sampleCheckpoint().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"generation": "g-000001"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCheckpoint(b, "fuzz")
		if err != nil {
			return
		}
		if _, ok := ParseGeneration(c.Generation); !ok {
			t.Fatalf("accepted a checkpoint naming %q", c.Generation)
		}
		again, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if c2, err := ParseCheckpoint(again, "fuzz"); err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// A checkpoint whose checksum holds but whose fields its readers would index or dereference
// out of range is damaged: anyone can recompute a sha256.
func TestParseCheckpointRefusesWhatReadersCannotUse(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *Checkpoint)
		want string
	}{
		{"the sample", func(c *Checkpoint) {}, ""},
		{"read to the end of its inputs", func(c *Checkpoint) { c.Position.Input = len(c.Inputs) }, ""},
		{"an inverted file without a graph", func(c *Checkpoint) { c.VectorIndex, c.HNSW = VectorIndexIVF, nil }, ""},
		{"a negative input", func(c *Checkpoint) { c.Position.Input = -1 }, "outside its"},
		{"an input past the last", func(c *Checkpoint) { c.Position.Input = len(c.Inputs) + 1 }, "outside its"},
		{"negative documents", func(c *Checkpoint) { c.Position.Docs = -5 }, "outside its"},
		{"a model without the graph's options", func(c *Checkpoint) { c.HNSW = nil }, "a model without the graph's options"},
		{"an unknown vector index", func(c *Checkpoint) { c.VectorIndex = "diskann" }, `vector index "diskann"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := sampleCheckpoint()
			tc.edit(c)
			b, err := c.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseCheckpoint(b, "CHECKPOINT")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "CHECKPOINT")):
				t.Fatalf("got %v, want an error naming CHECKPOINT and %q", err, tc.want)
			}
		})
	}
}
