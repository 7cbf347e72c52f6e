package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A static embedding model (Model2Vec layout) builds a dense index and searches it with no
// ONNX Runtime: a passage's own text finds that passage first; a query with another static
// model or another --dim is refused with the reason; --dim builds a truncated index that
// queries with the same --dim search.
func TestStaticModelIndexAndSearch(t *testing.T) {
	m2v := coreShared(t, "models/synthetic/static-model2vec")
	st := coreShared(t, "models/synthetic/static-st")
	corpusFile := filepath.Join(t.TempDir(), "sf200.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 200)
	type hit struct {
		PassageID any    `json:"passage_id"`
		Text      string `json:"text"`
	}
	search := func(t *testing.T, args ...string) []hit {
		t.Helper()
		out, stderr, err := runCLI(t, append([]string{"search", "-k", "3", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var res struct{ Hits []hit }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return res.Hits
	}
	for _, dim := range []string{"0", "64"} {
		t.Run("dim"+dim, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			if _, stderr, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", dir, "--model", m2v, "--dim", dim); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			manifests, _ := filepath.Glob(filepath.Join(dir, "*", "manifest.json"))
			if len(manifests) != 1 {
				t.Fatalf("manifests %v", manifests)
			}
			raw, err := os.ReadFile(manifests[0])
			if err != nil {
				t.Fatal(err)
			}
			wantDim := map[string]string{"0": `"dim":256`, "64": `"dim":64,"pooling":"mean","normalize":true,"max_seq_len":512,"onnx_file":"model.safetensors","precision":"fp16","full_dim":256`}[dim]
			compact := strings.Join(strings.Fields(string(raw)), "")
			if !strings.Contains(compact, `"kind":"static"`) || !strings.Contains(compact, wantDim) {
				t.Errorf("manifest lacks the static identity (%s):\n%s", wantDim, raw)
			}
			bm := search(t, "--index", dir, "--mode", "bm25", "vitamin D deficiency")
			if len(bm) == 0 {
				t.Fatal("no BM25 hits")
			}
			for i, h := range bm {
				dense := search(t, "--index", dir, "--mode", "dense", "--model", m2v, "--dim", dim, h.Text)
				if len(dense) == 0 || dense[0].PassageID != h.PassageID {
					t.Errorf("BM25 hit %d (%v): dense search of its text ranks %v first", i, h.PassageID, dense)
				}
			}
			for _, tc := range []struct {
				name string
				args []string
				want string
			}{
				{"other model", []string{"--model", st}, "does not match"},
				{"other dim", []string{"--model", m2v, "--dim", map[string]string{"0": "32", "64": "0"}[dim]}, "--dim"},
			} {
				_, _, err := runCLI(t, append(append([]string{"search", "--index", dir, "--mode", "dense"}, tc.args...), "vitamin D")...)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
				}
			}
		})
	}
}

// kairos embed runs a static model: unit vectors of the table's dimension, the backend named.
func TestCmdEmbedStatic(t *testing.T) {
	in := `{"id": "a", "text": "How old is the universe?"}` + "\n" + `{"id": "b", "text": "Vitamin D and bone density."}` + "\n"
	var stdout, stderr bytes.Buffer
	err := cmdEmbed(context.Background(), []string{"--model", coreShared(t, "models/synthetic/static-model2vec")},
		IO{Stdin: strings.NewReader(in), Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var r struct{ Vector []float64 }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var sq float64
		for _, x := range r.Vector {
			sq += x * x
		}
		if len(r.Vector) != 256 || math.Abs(sq-1) > 1e-4 {
			t.Errorf("vector %d: dim %d, squared norm %.5f", n, len(r.Vector), sq)
		}
		n++
	}
	if n != 2 || !strings.Contains(stderr.String(), "backend static") {
		t.Errorf("%d vectors; stderr:\n%s", n, stderr.String())
	}
}
