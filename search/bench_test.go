package search

import (
	"context"
	"testing"
	"time"
)

// BenchmarkBM25Query runs the SciFact queries one at a time (k = 10, default options) and
// reports the per-query latency percentiles.
func BenchmarkBM25Query(b *testing.B) {
	ix := openIndex(b, scifact, Options{})
	qs, _ := sciFactQueries(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := ix.Search(context.Background(), Request{Text: qs[i%len(qs)].Text, K: 10}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.ReportMetric(PercentileMS(lat, 0.5), "p50-ms")
	b.ReportMetric(PercentileMS(lat, 0.99), "p99-ms")
}
