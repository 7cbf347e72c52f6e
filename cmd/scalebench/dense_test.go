package scalebench

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestBenchScaleDenseEngines: with --model and --dense-engines, each collection's vector index is
// compared with the anchors on the vectors kairos index embedded (read back from its graph),
// queried by the bench's queries embedded the same way: Kairos's entry through the kairos
// binary's bench ann-engine, the anchors through their scripts, each result with its build,
// memory and recall at every sweep point, in the JSON row and in the table.
func TestBenchScaleDenseEngines(t *testing.T) {
	bin := buildKairos(t)
	model := filepath.Join(sharedtest.Dir(), "models", "synthetic", "static-model2vec")
	args := []string{
		"--passages", "2000", "--queries", "60", "--warmup", "5", "--model", model, "--xapian", "off", "--lucene", "off",
		"--dense-engines", "kairos,hnswlib,faiss-ivfflat", "--kairos", bin, "--shared", sharedtest.Dir(), "--work", t.TempDir(),
	}
	var stdout, stderr bytes.Buffer
	if err := runArgs(t, append(args, "--json"), &stdout, &stderr); err != nil {
		t.Fatalf("bench scale: %v\n%s", err, stderr.String())
	}
	var r Row
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	var names []string
	for _, d := range r.DenseEngines {
		names = append(names, d.Name())
		// The random static fixture's passages are near-duplicates of their mean (docs/
		// benchmarks.md, HNSW): recall is what an engine finds among near-ties, so only its
		// presence and range are asserted, and the exhaustive engine's ceiling.
		if d.Error != "" || d.N != 2000 || d.Queries != 60 || d.BuildS <= 0 || d.BuildPeakRSS <= 0 || d.ServeRSS <= 0 || len(d.Points) < 2 {
			t.Errorf("%s: %+v", d.Name(), d)
		}
		for _, p := range d.Points {
			if p.QPS <= 0 || p.Recall <= 0 || p.Recall > 1 {
				t.Errorf("%s at %v: recall %v, QPS %v", d.Name(), p.Point, p.Recall, p.QPS)
			}
		}
	}
	want := []string{"kairos-hnsw float", "kairos-hnsw int8", "kairos-hnsw binary", "kairos-ivf mapped", "hnswlib", "faiss-ivfflat"}
	if !slices.Equal(names, want) {
		t.Fatalf("dense engines %v, want %v", names, want)
	}
	// IVF-Flat probing every list is exact search: it finds the exact top 10 of the same vectors.
	ivf := r.DenseEngines[5]
	if last := ivf.Points[len(ivf.Points)-1]; last.Point["nprobe"] < ivf.Params["nlist"] || last.Recall < 0.99 {
		t.Errorf("faiss-ivfflat at every list (%v of %v): recall %v, want the exact top 10", last.Point["nprobe"], ivf.Params["nlist"], last.Recall)
	}
	if !r.Dense || r.DenseLatency == nil {
		t.Errorf("the index's own dense latency is missing: %+v", r)
	}
}

// indexVectors reads passage k's vector as row k from either kind of dense index: the graph's
// floats, or the inverted file's int8 form of the same vectors (cosine near 1 with them).
func TestIndexVectorsOfEitherIndex(t *testing.T) {
	bin := buildKairos(t)
	model := filepath.Join(sharedtest.Dir(), "models", "synthetic", "static-model2vec")
	corpus := filepath.Join(sharedtest.Dir(), "data", "beir-scifact", "corpus.jsonl")
	input := filepath.Join(t.TempDir(), "c.jsonl")
	b, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfterN(b, []byte("\n"), 301)
	if err := os.WriteFile(input, bytes.Join(lines[:300], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := map[string]annbench.Dataset{}
	for _, kind := range []string{"hnsw", "ivf"} {
		idx := filepath.Join(t.TempDir(), kind)
		if out, err := exec.Command(bin, "index", "--input", input, "--model", model, "--index", idx, "--vector-index", kind, "--quiet").CombinedOutput(); err != nil {
			t.Fatalf("kairos index --vector-index %s: %v\n%s", kind, err, out)
		}
		ds, err := indexVectors(idx)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		sets[kind] = ds
	}
	g, f := sets["hnsw"], sets["ivf"]
	if len(g.Base) < 300 || len(f.Base) != len(g.Base) || f.Dim != g.Dim {
		t.Fatalf("graph %d vectors of dim %d, inverted file %d of dim %d: want the same passages", len(g.Base), g.Dim, len(f.Base), f.Dim)
	}
	for k := range g.Base {
		var dot, ng, nf float64
		for i := range g.Base[k] {
			dot += float64(g.Base[k][i]) * float64(f.Base[k][i])
			ng += float64(g.Base[k][i]) * float64(g.Base[k][i])
			nf += float64(f.Base[k][i]) * float64(f.Base[k][i])
		}
		if c := dot / math.Sqrt(ng*nf); c < 0.99 {
			t.Fatalf("passage %d: cosine %.4f between the graph's vector and the inverted file's", k, c)
		}
	}
}
