package annbench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenReport has a Kairos index in two settings, an IVF anchor whose fastest point is under
// the summary's rate, a two-knob anchor, and an engine that failed.
func goldenReport() *Report {
	run := RunInfo{N: 1000000, Dim: 256, Queries: 1000, K: 10, Data: "topic fixture (1000 topics)", Date: "2026-11-29",
		Load1: 1.25, Threads: 2, AtQPS: 1000}
	ef := func(v float64) map[string]float64 { return map[string]float64{"ef": v} }
	hnswParams := map[string]float64{"m": 16, "efc": 200, "seed": 1}
	return &Report{RunInfo: run, Results: []Result{
		{RunInfo: run, Engine: "kairos-hnsw", Setting: "float", Version: "0123456789ab", Knob: "ef", Params: hnswParams,
			BuildS: 272.7, BuildPeakRSS: 640e6, IndexBytes: 1.43e9, LoadS: 1.9, ServeRSS: 1.3e9, ServePeakRSS: 1.45e9, ServeCPUs: 1,
			Points: []Point{{ef(32), 0.5047, 4633.2, 4700}, {ef(128), 0.7349, 2030, 2100.4}, {ef(512), 0.9012, 731.6, 740}}},
		{RunInfo: run, Engine: "kairos-hnsw", Setting: "int8", Version: "0123456789ab", Knob: "ef", Params: hnswParams,
			BuildS: 272.7, BuildPeakRSS: 640e6, IndexBytes: 1.43e9, LoadS: 0.4, ServeRSS: 420e6, ServePeakRSS: 1.1e9, ServeCPUs: 1,
			Points: []Point{{ef(32), 0.507, 7892, 8000}, {ef(128), 0.7381, 3239, 3300}, {ef(512), 0.8997, 1148, 1160}}},
		{RunInfo: run, Engine: "faiss-ivfpq", Version: "1.7.3", Knob: "nprobe", Params: map[string]float64{"nlist": 4096, "pq_m": 32, "train": 262144},
			BuildS: 180.5, BuildPeakRSS: 450e6, IndexBytes: 50e6, LoadS: 0.1, ServeRSS: 90e6, ServePeakRSS: 95e6, ServeCPUs: 1,
			Points: []Point{{map[string]float64{"nprobe": 64}, 0.41, 900, 950}, {map[string]float64{"nprobe": 256}, 0.45, 250, 260}}},
		{RunInfo: run, Engine: "lancedb-ivfpq", Version: "0.31.0", Knob: "nprobes, refine_factor", Params: map[string]float64{"num_partitions": 0, "num_sub_vectors": 0},
			BuildS: 95, BuildPeakRSS: 1.2e9, IndexBytes: 1.1e9, LoadS: 0.02, ServeRSS: 300e6, ServePeakRSS: 310e6, ServeCPUs: 1,
			Points: []Point{{map[string]float64{"nprobes": 20, "refine_factor": 0}, 0.6, 1200, 1100}, {map[string]float64{"nprobes": 20, "refine_factor": 4}, 0.85, 1050, 1000},
				{map[string]float64{"nprobes": 80, "refine_factor": 4}, 0.93, 600, 590}}},
		{RunInfo: run, Engine: "qdrant-bq", Version: "1.16.3", Knob: "hnsw_ef, oversampling", Params: hnswParams, BuildS: 12,
			BuildPeakRSS: 300e6, Error: "build: qdrant exited while indexing: killed"},
	}}
}

// TestReportGolden holds the table, the JSON lines and the plot to testdata: scripts read the
// first two, so a renamed column or field shows up as a golden diff, and the plot is checked by
// looking at it (kairos bench ann --engines ... --plot).
func TestReportGolden(t *testing.T) {
	rep := goldenReport()
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"report.txt", func(b *bytes.Buffer) error { return WriteReport(b, rep, false) }},
		{"report.jsonl", func(b *bytes.Buffer) error { return WriteReport(b, rep, true) }},
		{"plot.svg", func(b *bytes.Buffer) error { return WritePlot(b, rep) }},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs:\ngot\n%s\nwant\n%s", path, b.Bytes(), want)
		}
	}
	// What the summary must say, whatever the layout.
	var b bytes.Buffer
	if err := WriteReport(&b, rep, false); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{
		"kairos-hnsw int8 0.8997 at 1,148 queries/s (ef=512)", // the best recall at 1,000 QPS or more
		"faiss-ivfpq not reached (fastest point 900 queries/s)",
		"lancedb-ivfpq 0.8500 at 1,050 queries/s (nprobes=20 refine_factor=4)",
		"qdrant-bq build: qdrant exited",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
