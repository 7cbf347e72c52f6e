package indexer

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkBuildSciFact indexes the SciFact corpus (5,183 abstracts, 13,357 passages):
// read, split, passage store and BM25. Reports passages/s.
func BenchmarkBuildSciFact(b *testing.B) {
	in := shared(b, "data/beir-scifact/corpus.jsonl")
	root := b.TempDir()
	var passages int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sum, err := Build(context.Background(), Options{
			Dir:    filepath.Join(root, strconv.Itoa(i)),
			Inputs: []InputSpec{{Path: in}},
		})
		if err != nil {
			b.Fatal(err)
		}
		passages += sum.Counts.Passages
	}
	b.ReportMetric(float64(passages)/b.Elapsed().Seconds(), "passages/s")
}
