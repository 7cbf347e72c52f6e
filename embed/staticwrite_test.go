package embed

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteStaticModelOpens: a table written by WriteStaticModel opens as a static model whose
// vectors are the weighted mean of the rows of the text's pieces, normalised, computed here
// from the same table by hand.
func TestWriteStaticModelOpens(t *testing.T) {
	tokPath := filepath.Join(sharedModels, "tokenizers", "all-MiniLM-L6-v2", "tokenizer.json")
	tok, err := StaticTokenizer(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, dim := tok.VocabSize(), 12
	if rows != 30522 {
		t.Fatalf("bert-base-uncased has %d token ids here, want 30522", rows)
	}
	table := make([]float32, rows*dim)
	for i := range table {
		table[i] = float32(math.Sin(float64(i) * 0.37))
	}
	weights := make([]float32, rows)
	for i := range weights {
		weights[i] = 0.25 + float32(i%7)/8
	}
	dir := t.TempDir()
	if err := WriteStaticModel(dir, StaticTable{Rows: rows, Dim: dim, Embeddings: table, Weights: weights, Normalize: true, Tokenizer: tokPath}); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEncoder(context.Background(), Options{ModelDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Info().Dim != dim {
		t.Fatalf("dim %d, want %d", e.Info().Dim, dim)
	}
	texts := []string{"Photosynthesis converts light into chemical energy.", "the the the", "naïve café résumé ünknøwn"}
	got, err := e.Encode(context.Background(), Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		ids := tok.Pieces(text)
		if len(ids) == 0 {
			t.Fatalf("%q: no pieces", text)
		}
		want := make([]float64, dim)
		for _, id := range ids {
			for j := range want {
				want[j] += float64(weights[id]) * float64(table[id*dim+j])
			}
		}
		var dot, nw, ng float64
		for j := range want {
			dot += want[j] * float64(got[i][j])
			nw += want[j] * want[j]
			ng += float64(got[i][j]) * float64(got[i][j])
		}
		if c := dot / math.Sqrt(nw*ng); c < 1-1e-6 || math.Abs(ng-1) > 1e-5 {
			t.Errorf("%q: cosine %.8f with the hand-computed mean, norm² %.6f", text, c, ng)
		}
	}
}

func TestWriteStaticModelRefuses(t *testing.T) {
	tokPath := filepath.Join(sharedModels, "tokenizers", "all-MiniLM-L6-v2", "tokenizer.json")
	for _, tc := range []struct {
		name string
		tab  StaticTable
		want string
	}{
		{"short table", StaticTable{Rows: 2, Dim: 3, Embeddings: make([]float32, 5), Tokenizer: tokPath}, "5 floats for 2 rows of 3"},
		{"short weights", StaticTable{Rows: 2, Dim: 1, Embeddings: make([]float32, 2), Weights: make([]float32, 1), Tokenizer: tokPath}, "1 weights for 2 rows"},
		{"no tokenizer", StaticTable{Rows: 1, Dim: 1, Embeddings: make([]float32, 1), Tokenizer: filepath.Join(t.TempDir(), "none.json")}, "none.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteStaticModel(t.TempDir(), tc.tab)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzReadSafetensors: readSafetensors never panics on any bytes, and what it accepts is
// consistent: every tensor's data holds exactly its shape's elements. Seeded with a file that
// encodeSafetensors wrote and edits of it.
func FuzzReadSafetensors(f *testing.F) {
	var buf bytes.Buffer
	if err := encodeSafetensors(&buf, []f32Tensor{{"embeddings", []int{3, 2}, []float32{1, 2, 3, 4, 5, 6}}, {"weights", []int{3}, []float32{0.5, 1, 2}}}); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-4])
	f.Add(bytes.Replace(good, []byte(`"F32"`), []byte(`"I64"`), 1))
	f.Add(bytes.Replace(good, []byte(`[3,2]`), []byte(`[-3,2]`), 1))
	f.Add([]byte("\x08\x00\x00\x00\x00\x00\x00\x00{}      "))
	path := filepath.Join(f.TempDir(), "m.safetensors")
	size := map[string]int{"F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ts, err := readSafetensors(path)
		if err != nil {
			return
		}
		for name, x := range ts {
			n := 1
			for _, d := range x.Shape {
				n *= d
			}
			if len(x.Data) != n*size[x.DType] {
				t.Fatalf("tensor %q: %d bytes for shape %v of %s", name, len(x.Data), x.Shape, x.DType)
			}
		}
	})
}
