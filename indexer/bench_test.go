package indexer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
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

// BenchmarkUpdateSciFact updates a SciFact index with a revision in which ~1% of the
// abstracts changed (BM25 only); compare with BenchmarkBuildSciFact.
func BenchmarkUpdateSciFact(b *testing.B) {
	older, newer, _, _, _ := scifactRevisions(b)
	root := b.TempDir()
	base := filepath.Join(root, "base")
	in := func(p string) []InputSpec { return []InputSpec{{Path: p, Options: corpus.Options{Source: "scifact"}}} }
	if _, err := Build(context.Background(), Options{Dir: base, Inputs: in(older)}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(root, strconv.Itoa(i))
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := updateIndex(context.Background(), UpdateOptions{Options: Options{Dir: dir, Inputs: in(newer)}, DeleteMissing: true, CompactRatio: -1}); err != nil {
			b.Fatal(err)
		}
	}
}
