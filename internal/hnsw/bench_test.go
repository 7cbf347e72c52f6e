package hnsw_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/kairos-rag/kairos/internal/hnsw"
	"github.com/kairos-rag/kairos/internal/hnsw/annbench"
)

func bytesOf(t testing.TB, g *hnsw.Graph) io.Reader { return bytes.NewReader(serialize(t, g)) }

// BenchmarkSearch: single-thread k=10 queries on 20,000 x 128 clustered vectors at ef 32.
// The full 50,000 x 384 comparison with hnswlib is `kairos bench ann --engines` (make bench).
func BenchmarkSearch(b *testing.B) {
	f := newFixture(b, 20000, 1000, 128, hnsw.Options{Seed: 1, Metric: hnsw.Dot})
	b.ResetTimer()
	i := 0
	for b.Loop() {
		f.graph.Search(f.ds.Queries[i%len(f.ds.Queries)], 10, 32)
		i++
	}
}

// BenchmarkSearchMapped is BenchmarkSearch on the same graph saved and loaded mapped: the walk
// on int8 codes (float rescoring of 2*k candidates read from the file) or on binary codes
// (Hamming distance, then int8 and float rescoring). It reports recall@10 against exact
// search beside the time, since the two trade one for the other.
func BenchmarkSearchMapped(b *testing.B) {
	f := newFixture(b, 20000, 1000, 128, hnsw.Options{Seed: 1, Metric: hnsw.Dot})
	for _, codes := range []string{hnsw.CodesInt8, hnsw.CodesBinary} {
		b.Run("codes="+codes, func(b *testing.B) {
			if err := f.graph.SetCodes(codes); err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "g.hnsw")
			if err := f.graph.Save(path); err != nil {
				b.Fatal(err)
			}
			m, err := hnsw.LoadWith(path, hnsw.LoadOptions{Mapped: true})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			mf := &fixture{ds: f.ds, keys: f.keys, graph: m, exact: f.exact}
			recall := mf.recall(b, 10, 32)
			b.ResetTimer()
			i := 0
			for b.Loop() {
				m.Search(f.ds.Queries[i%len(f.ds.Queries)], 10, 32)
				i++
			}
			b.ReportMetric(recall, "recall@10")
		})
	}
}

// BenchmarkAdd: inserting 5,000 x 128 clustered vectors (M 16, efConstruction 200), per vector,
// single worker and all cores.
func BenchmarkAdd(b *testing.B) {
	ds := annbench.Generate(5000, 1, 128, 1)
	keys := make([]uint64, len(ds.Base))
	for i := range keys {
		keys[i] = uint64(i)
	}
	for _, w := range []int{1, 0} {
		name := "workers=1"
		if w == 0 {
			name = "workers=all"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				g, _ := hnsw.New(128, hnsw.Options{Seed: 1, Workers: w, Metric: hnsw.Dot})
				if err := g.Add(context.Background(), keys, ds.Base); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/vector")
		})
	}
}

// BenchmarkLoad: reading a saved 20,000 x 128 graph.
func BenchmarkLoad(b *testing.B) {
	f := newFixture(b, 20000, 1, 128, hnsw.Options{Seed: 1})
	data := serialize(b, f.graph)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := hnsw.Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
