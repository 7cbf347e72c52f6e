package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/search"
)

// fixedEngine returns the same ten SciFact hits for every query, so that the benchmarks
// below measure the server (decoding, validation, JSON encoding, metrics, logging) alone.
type fixedEngine struct{ hits []rerank.Hit }

func (e fixedEngine) Search(ctx context.Context, q rerank.Query) (rerank.Result, error) {
	return rerank.Result{Hits: e.hits}, nil
}
func (e fixedEngine) Passage(ctx context.Context, id string) (corpus.Passage, error) {
	return e.hits[0].Passage, nil
}
func (e fixedEngine) Stats() search.Stats             { return search.Stats{} }
func (e fixedEngine) Capabilities() live.Capabilities { return live.Capabilities{} }
func (e fixedEngine) Close() error                    { return nil }
func (e fixedEngine) DocFreq(ctx context.Context, words []string) ([]int, int, error) {
	return make([]int, len(words)), len(e.hits), nil
}

func benchServer(b *testing.B) *Server {
	ps := sciFactPassages(b, 10)
	e := fixedEngine{}
	for i, p := range ps {
		e.hits = append(e.hits, rerank.Hit{Hit: search.Hit{Passage: p, Score: 20 - float64(i), Rank: i + 1}})
	}
	s, err := New(Options{Index: engineIndex(e)})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Reload(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkServerOverhead is the per-request cost of the server around the engine, for one
// query answered with ten SciFact abstracts (about 15 KB of JSON).
func BenchmarkServerOverhead(b *testing.B) {
	for _, tt := range []struct{ name, path, body string }{
		{"v1-search", "/v1/search", `{"text":"0-dimensional biomaterials lack inductive properties.","k":10,"mode":"bm25"}`},
		{"wikichat", "/search", `{"query":"0-dimensional biomaterials lack inductive properties.","num_blocks":10}`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			s := benchServer(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					w := httptest.NewRecorder()
					s.ServeHTTP(w, httptest.NewRequest("POST", tt.path, strings.NewReader(tt.body)))
					if w.Code != 200 {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
		})
	}
}
