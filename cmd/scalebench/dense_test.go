package scalebench

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

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
	want := []string{"kairos-hnsw float", "kairos-hnsw int8", "kairos-hnsw binary", "hnswlib", "faiss-ivfflat"}
	if !slices.Equal(names, want) {
		t.Fatalf("dense engines %v, want %v", names, want)
	}
	// IVF-Flat probing every list is exact search: it finds the exact top 10 of the same vectors.
	ivf := r.DenseEngines[4]
	if last := ivf.Points[len(ivf.Points)-1]; last.Point["nprobe"] < ivf.Params["nlist"] || last.Recall < 0.99 {
		t.Errorf("faiss-ivfflat at every list (%v of %v): recall %v, want the exact top 10", last.Point["nprobe"], ivf.Params["nlist"], last.Recall)
	}
	if !r.Dense || r.DenseLatency == nil {
		t.Errorf("the index's own dense latency is missing: %+v", r)
	}
}
