package scalebench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRows are the rows of the golden files: both anchors, dense latencies and dense engines,
// an anchor not run, and a size stopped after its build.
func goldenRows() []Row {
	run := annbench.RunInfo{N: 100000, Dim: 256, Queries: 1000, K: 10, Data: "the index's vectors", Date: "2026-11-29", Load1: 1.5, Threads: 2, AtQPS: 1000}
	dense := []annbench.Result{
		{RunInfo: run, Engine: "kairos-hnsw", Setting: "int8", Version: "0123456789ab", Knob: "ef", BuildS: 30.5, BuildPeakRSS: 120e6,
			IndexBytes: 140e6, LoadS: 0.1, ServeRSS: 60e6, ServePeakRSS: 70e6, ServeCPUs: 1,
			Points: []annbench.Point{{Point: map[string]float64{"ef": 64}, Recall: 0.81, QPS: 5200, CPUQPS: 5400}, {Point: map[string]float64{"ef": 256}, Recall: 0.93, QPS: 1900, CPUQPS: 2000}}},
		{RunInfo: run, Engine: "faiss-ivfpq", Version: "1.7.3", Knob: "nprobe", BuildS: 20, BuildPeakRSS: 200e6, IndexBytes: 5e6, LoadS: 0.01,
			ServeRSS: 40e6, ServePeakRSS: 45e6, ServeCPUs: 1,
			Points: []annbench.Point{{Point: map[string]float64{"nprobe": 8}, Recall: 0.4, QPS: 9000, CPUQPS: 9100}, {Point: map[string]float64{"nprobe": 64}, Recall: 0.5, QPS: 1500, CPUQPS: 1550}}},
	}
	lat := func(p50, p99 float64) Latency {
		return Latency{P50MS: p50, P99MS: p99, MeanMS: (p50 + p99) / 2, Queries: 1000, Empty: 3}
	}
	d, h, topK := lat(4.5, 9.25), lat(5.5, 11), lat(0.3, 2)
	return []Row{
		{Passages: 100000, Corpus: "synthetic seed 1", CorpusBytes: 61e6, GenerateS: 3.2, BuildS: 40.5, BuildPerS: 2469.1,
			BuildPeakRSS: 812e6, BuildSlowest: 2100, BuildTailS: 1.5,
			BuildProgress: []ProgressPoint{{5, 9000}, {10, 20000}, {15, 31000}, {20, 38000}, {25, 52000}, {30, 64000}, {35, 77000}, {39, 100000}}, IndexBytes: 140e6, Lexical: "postings", Dense: true, K: 10,
			BM25: lat(0.42, 2.5), BM25TopK: &topK, DenseLatency: &d, HybridLatency: &h,
			Xapian:       &AnchorResult{Version: "1.4.22", Passages: 100000, BuildS: 30, BuildPerS: 3333.3, PeakRSS: 90e6, IndexBytes: 200e6, P50MS: 0.8, P99MS: 6, MeanMS: 1.2, Queries: 1000, Empty: 2},
			LuceneNotRun: "no java (exec: \"java\": executable file not found in $PATH): install ...", Load1: 1.25, GOMAXPROCS: 2,
			DenseEngines: dense},
		{Passages: 1000000, Corpus: "synthetic seed 1", CorpusBytes: 610e6, BuildS: 420, BuildPerS: 2381, BuildPeakRSS: 1.9e9,
			IndexBytes: 1.4e9, Lexical: "postings", Dense: true, K: 10, BM25: lat(1.5, 12), Load1: 0.5, GOMAXPROCS: 2,
			Xapian: &AnchorResult{Version: "1.4.22", Passages: 1000000, BuildS: 300, BuildPerS: 3333.3, PeakRSS: 95e6, IndexBytes: 2e9, P50MS: 3, P99MS: 30, MeanMS: 5, Queries: 1000},
			Lucene: &AnchorResult{Version: "8.7.0", Passages: 1000000, BuildS: 200, BuildPerS: 5000, PeakRSS: 600e6, IndexBytes: 1.1e9, Segments: 4, P50MS: 1, P99MS: 8, MeanMS: 2, Queries: 1000,
				Threads: 2, MergeS: 40, MergedSegments: 1, MergedP50MS: 0.75, MergedP99MS: 6, MergedMeanMS: 1.5}},
		{Passages: 10000000, Corpus: "synthetic seed 1", CorpusBytes: 6.1e9, BuildS: 250, BuildPerS: 40000, BuildPeakRSS: 0.9e9,
			IndexBytes: 9.6e9, Lexical: "postings", Dense: true, K: 10, BM25: lat(20, 150), Load1: 1, GOMAXPROCS: 2,
			Incomplete: "xapian anchor: signal: killed"},
	}
}

// TestWriteRowsGolden holds the table's columns, the JSON fields of a row and the plot to
// testdata: scripts read the first two, so a renamed column or field must show up as a golden
// diff, and the plot is checked by looking at it (kairos bench scale --plot).
func TestWriteRowsGolden(t *testing.T) {
	rows := goldenRows()
	for _, tc := range []struct {
		file   string
		asJSON bool
	}{{"rows.txt", false}, {"rows.jsonl", true}, {"plot.svg", false}} {
		var b bytes.Buffer
		write := func() error { return WriteRows(&b, rows, tc.asJSON) }
		if strings.HasSuffix(tc.file, ".svg") {
			write = func() error { return WritePlot(&b, rows) }
		}
		if err := write(); err != nil {
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
}

// A build's rate is drawn from its start: a short build with two progress lines draws a line
// from 0 s, where it had one point (nothing drawn).
func TestRateSeriesFromTheStart(t *testing.T) {
	s := rateSeries(Row{Passages: 100000, BuildProgress: []ProgressPoint{{5, 55000}, {10, 100000}, {10, 100000}}})
	if !slices.Equal(s.X, []float64{0, 5, 10}) || !slices.Equal(s.Y, []float64{11000, 11000, 9000}) {
		t.Errorf("rate series x %v y %v, want x [0 5 10] y [11000 11000 9000]", s.X, s.Y)
	}
}
